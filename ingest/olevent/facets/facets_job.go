package facets

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// WireJob is the job of a RunEvent or JobEvent as sent.
type WireJob struct {
	Namespace string                     `json:"namespace"`
	Name      string                     `json:"name"`
	Facets    map[string]json.RawMessage `json:"facets"`
	// FacetsTree is Facets in the decoder's parse tree, if any.
	FacetsTree Tree `json:"-"`
}

type wireJobType struct {
	ProcessingType string `json:"processingType"`
	Integration    string `json:"integration"`
	JobType        string `json:"jobType"`
}

func checkJobType(j *wireJobType) *problem {
	switch strings.ToUpper(j.ProcessingType) {
	case "", olevent.ProcessingBatch, olevent.ProcessingStreaming, olevent.ProcessingService, olevent.ProcessingNone:
		return nil
	}
	return bad("processingType", olevent.RuleEnum, "processingType must be BATCH, STREAMING, SERVICE or NONE, got %q", Truncate(j.ProcessingType))
}

type wireSQL struct {
	Query   string `json:"query"`
	Dialect string `json:"dialect"`
}

func checkSQL(s *wireSQL) *problem { return need("", "query", s.Query) }

type wireSourceCode struct {
	Language   string `json:"language"`
	SourceCode string `json:"sourceCode"`
}

func checkSourceCode(s *wireSourceCode) *problem { return need("", "sourceCode", s.SourceCode) }

// wireSourceLocation lists the fields kept, in the order they are serialised into Job.SourceLocation.
type wireSourceLocation struct {
	Type    string `json:"type,omitempty"`
	URL     string `json:"url,omitempty"`
	RepoURL string `json:"repoUrl,omitempty"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	Tag     string `json:"tag,omitempty"`
	Branch  string `json:"branch,omitempty"`
}

func checkSourceLocation(s *wireSourceLocation) *problem { return need("", "url", s.URL) }

type wireDocumentation struct {
	Description string `json:"description"`
}

func checkDocumentation(d *wireDocumentation) *problem { return need("", "description", d.Description) }

type wireOwnership struct {
	Owners []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"owners"`
}

func checkOwnership(o *wireOwnership) *problem {
	for i, ow := range o.Owners {
		if p := need(idx("owners", i), "name", ow.Name); p != nil {
			return p
		}
	}
	return nil
}

func (o *wireOwnership) owners() []olevent.Owner {
	out := make([]olevent.Owner, 0, len(o.Owners))
	for _, ow := range o.Owners {
		out = append(out, olevent.Owner{Name: ow.Name, Type: ow.Type})
	}
	return out
}

type wireTags struct {
	Tags []struct {
		Key    string `json:"key"`
		Value  string `json:"value"`
		Source string `json:"source"`
		Field  string `json:"field"`
	} `json:"tags"`
}

func checkTags(t *wireTags) *problem {
	for i, tg := range t.Tags {
		if p := need(idx("tags", i), "key", tg.Key); p != nil {
			return p
		}
	}
	return nil
}

func (t *wireTags) tags() []olevent.Tag {
	out := make([]olevent.Tag, 0, len(t.Tags))
	for _, tg := range t.Tags {
		out = append(out, olevent.Tag{Key: tg.Key, Value: tg.Value, Source: tg.Source, Field: tg.Field})
	}
	return out
}

// wireDbtNode is the part of openlineage-dbt's dbt_node job facet Headwater interprets: the node's unique_id, the
// job's stable id (docs/adr/0027-dbt-job-identity.md). Its other fields stay in the raw facet.
type wireDbtNode struct {
	UniqueID string `json:"unique_id"`
}

// dbtResourceTypes are the dbt resource types (the unique_id's first part) a dbt_node facet may name.
var dbtResourceTypes = []string{"model", "seed", "snapshot", "test", "source"}

func checkDbtNode(d *wireDbtNode) *problem {
	if p := need("", "unique_id", d.UniqueID); p != nil {
		return p
	}
	if len(d.UniqueID) > olevent.MaxDbtUniqueIDBytes {
		return bad("unique_id", olevent.RuleMaxLength, "unique_id is longer than %d bytes", olevent.MaxDbtUniqueIDBytes)
	}
	kind, rest, _ := strings.Cut(d.UniqueID, ".")
	if rest == "" || !slices.Contains(dbtResourceTypes, kind) {
		return bad("unique_id", olevent.RuleFormat, "unique_id must be <%s>.<package>.<name>, got %q",
			strings.Join(dbtResourceTypes, "|"), Truncate(d.UniqueID))
	}
	return nil
}

// BuildJob interprets the job part of a RunEvent or JobEvent.
func BuildJob(w *WireJob, issues *[]olevent.FacetIssue) *olevent.Job {
	s := facetScope{path: "job.facets", issues: issues, tree: w.FacetsTree}
	live, deleted := splitFacets(s, w.Facets)
	j := &olevent.Job{Namespace: w.Namespace, Name: w.Name, Facets: live, Deleted: deleted}
	if t := interpret(s, live, olevent.FacetJobType, checkJobType); t != nil {
		j.ProcessingType, j.Integration, j.JobType = strings.ToUpper(t.ProcessingType), t.Integration, t.JobType
	}
	if q := interpret(s, live, olevent.FacetSQL, checkSQL); q != nil {
		j.SQL, j.SQLDialect = q.Query, q.Dialect
	}
	if c := interpret(s, live, olevent.FacetSourceCode, checkSourceCode); c != nil {
		j.SourceCode, j.SourceLanguage = c.SourceCode, c.Language
	}
	if l := interpret(s, live, olevent.FacetSourceCodeLocation, checkSourceLocation); l != nil {
		b, _ := json.Marshal(l) // plain strings: cannot fail
		j.SourceLocation = string(b)
	}
	if d := interpret(s, live, olevent.FacetDocumentation, checkDocumentation); d != nil {
		j.Description = d.Description
	}
	if o := interpret(s, live, olevent.FacetOwnership, checkOwnership); o != nil {
		j.Owners = o.owners()
	}
	if t := interpret(s, live, olevent.FacetTags, checkTags); t != nil {
		j.Tags = t.tags()
		for i := range j.Tags {
			j.Tags[i].Field = "" // job tags have no field
		}
	}
	if l := interpret(s, live, olevent.FacetLineage, checkJobLineage); l != nil {
		j.Lineage = l.entries()
	}
	if d := interpret(s, live, olevent.FacetDbtNode, checkDbtNode); d != nil {
		j.DbtUniqueID = d.UniqueID
	}
	return j
}
