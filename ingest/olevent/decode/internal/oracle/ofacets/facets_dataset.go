package ofacets

import (
	"encoding/json"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// WireDataset is a dataset (input, output or a DatasetEvent's) as sent.
type WireDataset struct {
	Namespace    string                     `json:"namespace"`
	Name         string                     `json:"name"`
	Facets       map[string]json.RawMessage `json:"facets"`
	InputFacets  map[string]json.RawMessage `json:"inputFacets"`
	OutputFacets map[string]json.RawMessage `json:"outputFacets"`
}

// BuildDataset interprets one dataset; path is "inputs[2]", "outputs[0]" or "dataset".
func BuildDataset(w *WireDataset, path string, issues *[]olevent.FacetIssue) olevent.Dataset {
	s := facetScope{path: path + ".facets", issues: issues}
	live, deleted := splitFacets(s, w.Facets)
	d := olevent.Dataset{Namespace: w.Namespace, Name: w.Name, Facets: live, Deleted: deleted,
		InputFacets: w.InputFacets, OutputFacets: w.OutputFacets}
	interpretDatasetFacets(s, live, &d)
	if f := interpret(facetScope{path: path + ".inputFacets", issues: issues}, w.InputFacets, olevent.FacetIcebergScanReport, checkScanReport); f != nil {
		d.ScanSnapshot = f.snapshot()
	}
	d.Publication = publication(facetScope{path: path + ".outputFacets", issues: issues}, w.OutputFacets, s, live)
	return d
}

func interpretDatasetFacets(s facetScope, live map[string]json.RawMessage, d *olevent.Dataset) {
	if f := interpret(s, live, olevent.FacetSchema, checkSchema); f != nil {
		d.Schema = f.flatten()
	}
	if f := interpret(s, live, olevent.FacetColumnLineage, checkColumnLineage); f != nil {
		d.ColumnLineage = f.lineage()
	}
	if f := interpret(s, live, olevent.FacetSymlinks, checkSymlinks); f != nil {
		d.Symlinks = f.identifiers()
	}
	if f := interpret(s, live, olevent.FacetLifecycle, checkLifecycle); f != nil {
		d.Lifecycle = f.lifecycle()
	}
	if f := interpret(s, live, olevent.FacetVersion, checkVersion); f != nil {
		d.Version = f.version()
	}
	if f := interpret(s, live, olevent.FacetOwnership, checkOwnership); f != nil {
		d.Owners = f.owners()
	}
	if f := interpret(s, live, olevent.FacetTags, checkTags); f != nil {
		d.Tags = f.tags()
	}
	if f := interpret(s, live, olevent.FacetDocumentation, checkDocumentation); f != nil {
		d.Description = f.Description
	}
	if f := interpret(s, live, olevent.FacetLineage, checkDatasetLineage); f != nil {
		d.Lineage = f.facet()
	}
}

// publication reads headwater_publication from the output facets, else from the dataset facets (a quality gate
// sends it on a DatasetEvent). The output facet wins when both are present.
func publication(out facetScope, outFacets map[string]json.RawMessage, ds facetScope, dsFacets map[string]json.RawMessage) *olevent.Publication {
	if p := interpret(out, outFacets, olevent.FacetPublication, checkPublication); p != nil {
		return &olevent.Publication{State: p.State, Reason: p.Reason}
	}
	if _, ok := outFacets[olevent.FacetPublication]; ok {
		return nil
	}
	if p := interpret(ds, dsFacets, olevent.FacetPublication, checkPublication); p != nil {
		return &olevent.Publication{State: p.State, Reason: p.Reason}
	}
	return nil
}

type wirePublication struct {
	State  string `json:"state"`
	Reason string `json:"reason"`
}

func checkPublication(p *wirePublication) *problem {
	if p.State != olevent.PublicationPublished && p.State != olevent.PublicationWithheld {
		return bad("state", olevent.RuleEnum, "state must be PUBLISHED or WITHHELD, got %q", Truncate(p.State))
	}
	return nil
}

type wireSchemaField struct {
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Description string            `json:"description"`
	Fields      []wireSchemaField `json:"fields"`
}

type wireSchema struct {
	Fields []wireSchemaField `json:"fields"`
}

func checkSchema(s *wireSchema) *problem { return checkSchemaFields("fields", s.Fields) }

func checkSchemaFields(sub string, fs []wireSchemaField) *problem {
	for i, f := range fs {
		p := idx(sub, i)
		if pr := firstProblem(need(p, "name", f.Name), checkSchemaFields(p+".fields", f.Fields)); pr != nil {
			return pr
		}
	}
	return nil
}

// flatten lists fields depth-first, parents before children, nested paths joined with ".".
func (s *wireSchema) flatten() []olevent.SchemaField {
	out := []olevent.SchemaField{}
	var walk func(prefix string, fs []wireSchemaField)
	walk = func(prefix string, fs []wireSchemaField) {
		for _, f := range fs {
			p := JoinPath(prefix, f.Name)
			out = append(out, olevent.SchemaField{Path: p, Type: f.Type, Description: f.Description})
			walk(p, f.Fields)
		}
	}
	walk("", s.Fields)
	return out
}

type wireSymlinks struct {
	Identifiers []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Type      string `json:"type"`
	} `json:"identifiers"`
}

func checkSymlinks(s *wireSymlinks) *problem {
	for i, id := range s.Identifiers {
		p := idx("identifiers", i)
		if pr := firstProblem(need(p, "namespace", id.Namespace), need(p, "name", id.Name)); pr != nil {
			return pr
		}
	}
	return nil
}

func (s *wireSymlinks) identifiers() []olevent.Identifier {
	out := make([]olevent.Identifier, 0, len(s.Identifiers))
	for _, id := range s.Identifiers {
		out = append(out, olevent.Identifier{Namespace: id.Namespace, Name: id.Name, Type: id.Type})
	}
	return out
}

type wireLifecycle struct {
	State    string `json:"lifecycleStateChange"`
	Previous *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"previousIdentifier"`
}

func checkLifecycle(l *wireLifecycle) *problem {
	switch l.State {
	case olevent.LifecycleAlter, olevent.LifecycleCreate, olevent.LifecycleDrop, olevent.LifecycleOverwrite, olevent.LifecycleRename, olevent.LifecycleTruncate:
	default:
		return bad("lifecycleStateChange", olevent.RuleEnum,
			"lifecycleStateChange must be one of ALTER, CREATE, DROP, OVERWRITE, RENAME, TRUNCATE, got %q", Truncate(l.State))
	}
	if l.Previous == nil {
		return nil
	}
	return firstProblem(need("previousIdentifier", "namespace", l.Previous.Namespace),
		need("previousIdentifier", "name", l.Previous.Name))
}

func (l *wireLifecycle) lifecycle() *olevent.Lifecycle {
	lc := &olevent.Lifecycle{State: l.State}
	if l.Previous != nil {
		lc.PreviousIdentifier = &olevent.Identifier{Namespace: l.Previous.Namespace, Name: l.Previous.Name}
	}
	return lc
}

// wireVersion accepts datasetVersion as a string or, unambiguously, as a JSON integer (kept as its literal). A
// number with a fraction or an exponent is refused (issue 14 item 4): a version is an id, and a producer that
// writes one as a double (the OpenLineage Spark integration writes Iceberg snapshot ids so in
// icebergCommitReport, 8.5715264512767805E18) has already lost digits; storing it would name a version that
// never existed.
type wireVersion struct {
	DatasetVersion json.RawMessage `json:"datasetVersion"`
}

func checkVersion(v *wireVersion) *problem {
	if lossyNumber(v.DatasetVersion) {
		return bad("datasetVersion", olevent.RuleType, "datasetVersion %s is a number with a fraction or exponent, which cannot be an exact id; send it as a string", Truncate(string(v.DatasetVersion)))
	}
	if v.version() == "" {
		return bad("datasetVersion", olevent.RuleRequired, "datasetVersion is required and must be a non-empty string or an integer")
	}
	return nil
}

func (v *wireVersion) version() string {
	var s string
	if json.Unmarshal(v.DatasetVersion, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(v.DatasetVersion, &n) == nil && !lossyNumber(v.DatasetVersion) {
		return n.String()
	}
	return ""
}

// lossyNumber: a JSON number literal that is not a plain integer (it has a fraction or an exponent).
func lossyNumber(raw json.RawMessage) bool {
	lit := strings.TrimSpace(string(raw))
	if lit == "" || (lit[0] != '-' && (lit[0] < '0' || lit[0] > '9')) {
		return false
	}
	return strings.ContainsAny(lit, ".eE")
}

// wireScanReport is the part of the icebergScanReport input facet Headwater reads (ADR 0084): the scanned
// snapshot's id, which the Spark integration writes as a JSON double. Its text is kept exactly as sent; the
// projector matches it to the table's recorded snapshot ids, never parses it into an id of its own.
type wireScanReport struct {
	SnapshotID json.RawMessage `json:"snapshotId"`
}

func checkScanReport(r *wireScanReport) *problem {
	lit := strings.TrimSpace(string(r.SnapshotID))
	if lit == "" || lit == "null" {
		return bad("snapshotId", olevent.RuleRequired, "snapshotId is required")
	}
	if r.snapshot() == "" {
		return bad("snapshotId", olevent.RuleType, "snapshotId must be a number or a string of one, got %s", Truncate(lit))
	}
	return nil
}

// snapshot is the snapshotId's text: a number's literal, or a string holding a number literal; "" otherwise.
func (r *wireScanReport) snapshot() string {
	lit := strings.TrimSpace(string(r.SnapshotID))
	var s string
	if json.Unmarshal(r.SnapshotID, &s) == nil {
		lit = strings.TrimSpace(s)
	}
	var n json.Number
	if lit == "" || lit[0] == '"' || json.Unmarshal([]byte(lit), &n) != nil {
		return ""
	}
	return lit
}
