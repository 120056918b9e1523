package facets

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
)

type wireRunRef struct {
	Run *struct {
		RunID string `json:"runId"`
	} `json:"run"`
	Job *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"job"`
}

type wireParent struct {
	wireRunRef
	Root *wireRunRef `json:"root"`
}

func (r *wireRunRef) check(sub string) *problem {
	if r.Run == nil {
		return bad(JoinPath(sub, "run"), olevent.RuleRequired, "%s is required", JoinPath(sub, "run"))
	}
	if r.Job == nil {
		return bad(JoinPath(sub, "job"), olevent.RuleRequired, "%s is required", JoinPath(sub, "job"))
	}
	return firstProblem(needUUID(JoinPath(sub, "run.runId"), r.Run.RunID),
		need(JoinPath(sub, "job"), "namespace", r.Job.Namespace), need(JoinPath(sub, "job"), "name", r.Job.Name))
}

func (r *wireRunRef) ref() *olevent.ParentRef {
	return &olevent.ParentRef{RunID: strings.ToLower(r.Run.RunID), JobNamespace: r.Job.Namespace, JobName: r.Job.Name}
}

func checkParent(p *wireParent) *problem {
	if pr := p.check(""); pr != nil {
		return pr
	}
	if p.Root != nil {
		return p.Root.check("root")
	}
	return nil
}

type wireNominal struct {
	Start *string `json:"nominalStartTime"`
	End   *string `json:"nominalEndTime"`
}

func checkNominal(n *wireNominal) *problem {
	if n.Start == nil {
		return bad("nominalStartTime", olevent.RuleRequired, "nominalStartTime is required")
	}
	if _, err := ParseTime(*n.Start); err != nil {
		return bad("nominalStartTime", olevent.RuleFormat, "nominalStartTime must be an RFC 3339 date-time with offset")
	}
	if n.End != nil {
		if _, err := ParseTime(*n.End); err != nil {
			return bad("nominalEndTime", olevent.RuleFormat, "nominalEndTime must be an RFC 3339 date-time with offset")
		}
	}
	return nil
}

type wireErrorMessage struct {
	Message string `json:"message"`
}

func checkErrorMessage(e *wireErrorMessage) *problem { return need("", "message", e.Message) }

// ParseTime accepts RFC 3339 with a time-zone offset (Z or ±hh:mm), fractional seconds optional.
func ParseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// BuildRun interprets the run part of a RunEvent.
func BuildRun(w *WireRun, issues *[]olevent.FacetIssue) *olevent.Run {
	s := facetScope{path: "run.facets", issues: issues, tree: w.FacetsTree}
	live, deleted := splitFacets(s, w.Facets)
	r := &olevent.Run{ID: strings.ToLower(w.RunID), Facets: live, Deleted: deleted}
	if p := interpret(s, live, olevent.FacetParent, checkParent); p != nil {
		r.Parent = p.ref()
		if p.Root != nil {
			r.Root = p.Root.ref()
		}
	}
	if n := interpret(s, live, olevent.FacetNominalTime, checkNominal); n != nil {
		start, _ := ParseTime(*n.Start)
		start = start.UTC()
		r.NominalStart = &start
		if n.End != nil {
			end, _ := ParseTime(*n.End)
			end = end.UTC()
			r.NominalEnd = &end
		}
	}
	if e := interpret(s, live, olevent.FacetErrorMessage, checkErrorMessage); e != nil {
		r.ErrorMessage = e.Message
	}
	return r
}

// WireRun is the run of a RunEvent as sent.
type WireRun struct {
	RunID      string                     `json:"runId"`
	Facets     map[string]json.RawMessage `json:"facets"`
	FacetsTree Tree                       `json:"-"` // Facets in the decoder's parse tree, if any
}
