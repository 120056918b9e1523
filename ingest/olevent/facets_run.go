package olevent

import (
	"encoding/json"
	"strings"
	"time"
)

// Run facet keys Headwater interprets.
const (
	FacetParent       = "parent"
	FacetNominalTime  = "nominalTime"
	FacetErrorMessage = "errorMessage"
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
		return bad(join(sub, "run"), RuleRequired, "%s is required", join(sub, "run"))
	}
	if r.Job == nil {
		return bad(join(sub, "job"), RuleRequired, "%s is required", join(sub, "job"))
	}
	return firstProblem(needUUID(join(sub, "run.runId"), r.Run.RunID),
		need(join(sub, "job"), "namespace", r.Job.Namespace), need(join(sub, "job"), "name", r.Job.Name))
}

func (r *wireRunRef) ref() *ParentRef {
	return &ParentRef{RunID: strings.ToLower(r.Run.RunID), JobNamespace: r.Job.Namespace, JobName: r.Job.Name}
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
		return bad("nominalStartTime", RuleRequired, "nominalStartTime is required")
	}
	if _, err := parseTime(*n.Start); err != nil {
		return bad("nominalStartTime", RuleFormat, "nominalStartTime must be an RFC 3339 date-time with offset")
	}
	if n.End != nil {
		if _, err := parseTime(*n.End); err != nil {
			return bad("nominalEndTime", RuleFormat, "nominalEndTime must be an RFC 3339 date-time with offset")
		}
	}
	return nil
}

type wireErrorMessage struct {
	Message string `json:"message"`
}

func checkErrorMessage(e *wireErrorMessage) *problem { return need("", "message", e.Message) }

// parseTime accepts RFC 3339 with a time-zone offset (Z or ±hh:mm), fractional seconds optional.
func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// buildRun interprets the run part of a RunEvent.
func buildRun(w *wireRun, issues *[]FacetIssue) *Run {
	s := facetScope{path: "run.facets", issues: issues}
	live, deleted := splitFacets(s, w.Facets)
	r := &Run{ID: strings.ToLower(w.RunID), Facets: live, Deleted: deleted}
	if p := interpret(s, live, FacetParent, checkParent); p != nil {
		r.Parent = p.ref()
		if p.Root != nil {
			r.Root = p.Root.ref()
		}
	}
	if n := interpret(s, live, FacetNominalTime, checkNominal); n != nil {
		start, _ := parseTime(*n.Start)
		start = start.UTC()
		r.NominalStart = &start
		if n.End != nil {
			end, _ := parseTime(*n.End)
			end = end.UTC()
			r.NominalEnd = &end
		}
	}
	if e := interpret(s, live, FacetErrorMessage, checkErrorMessage); e != nil {
		r.ErrorMessage = e.Message
	}
	return r
}

type wireRun struct {
	RunID  string                     `json:"runId"`
	Facets map[string]json.RawMessage `json:"facets"`
}
