// Package ofacets is ingest/olevent/facets as it was before the single pass (ADR 0037), kept verbatim for the
// differential tests' reference decoder (package oracle).
package ofacets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/headwater-data/headwater/ingest/olevent"

	fastjson "github.com/goccy/go-json"
)

// facetScope collects the issues of one facet map (run.facets, job.facets, outputs[3].facets, ...).
type facetScope struct {
	path   string // e.g. "outputs[3].facets"
	issues *[]olevent.FacetIssue
}

func (s facetScope) flag(key, sub, rule, format string, args ...any) {
	facet := s.path + "." + key
	p := facet
	if sub != "" {
		p += "." + sub
	}
	msg := fmt.Sprintf("facet %s: %s (rule %s); the facet is kept raw and not interpreted", facet, fmt.Sprintf(format, args...), rule)
	*s.issues = append(*s.issues, olevent.FacetIssue{Path: p, Rule: rule, Message: msg})
}

// problem is what a facet check found wrong: a sub-path inside the facet, a rule and a plain-English reason.
type problem struct {
	sub, rule, msg string
}

func bad(sub, rule, format string, args ...any) *problem {
	return &problem{sub: sub, rule: rule, msg: fmt.Sprintf(format, args...)}
}

// deletedMarker reads the base-facet field _deleted. null (dbt) and absent both mean "not deleted".
type deletedMarker struct {
	Deleted *bool `json:"_deleted"`
}

// splitFacets separates facets sent with "_deleted": true from the live ones. A _deleted that is not a
// boolean or null is flagged and the facet stays live.
func splitFacets(s facetScope, raw map[string]json.RawMessage) (map[string]json.RawMessage, []string) {
	if raw == nil {
		return nil, nil
	}
	live := make(map[string]json.RawMessage, len(raw))
	var deleted []string
	for k, v := range raw {
		switch isDeleted(v) {
		case deletedYes:
			deleted = append(deleted, k)
		case deletedInvalid:
			s.flag(k, "_deleted", olevent.RuleType, "_deleted must be a boolean or null")
			live[k] = v
		default:
			live[k] = v
		}
	}
	slices.Sort(deleted)
	return live, deleted
}

type deletedState int

const (
	deletedNo deletedState = iota
	deletedYes
	deletedInvalid
)

func isDeleted(v json.RawMessage) deletedState {
	if !isObject(v) || !bytes.Contains(v, []byte(`"_deleted"`)) {
		return deletedNo
	}
	var m deletedMarker
	if err := json.Unmarshal(v, &m); err != nil {
		return deletedInvalid
	}
	if m.Deleted != nil && *m.Deleted {
		return deletedYes
	}
	return deletedNo
}

func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// interpret decodes facets[key] into T and runs check. It returns nil when the facet is absent, or when it is
// malformed, in which case the issue is recorded; the raw facet always stays in the facet map.
func interpret[T any](s facetScope, facets map[string]json.RawMessage, key string, check func(*T) *problem) *T {
	raw, ok := facets[key]
	if !ok {
		return nil
	}
	if !isObject(raw) {
		s.flag(key, "", olevent.RuleType, "the facet must be a JSON object")
		return nil
	}
	v := new(T)
	// goccy/go-json: the facets the gateway interprets are most of its decoding time, and encoding/json was 2-3
	// times slower at them.
	if err := fastjson.Unmarshal(raw, v); err != nil {
		s.flag(key, "", olevent.RuleType, "%v", err)
		return nil
	}
	if p := check(v); p != nil {
		s.flag(key, p.sub, p.rule, "%s", p.msg)
		return nil
	}
	return v
}

// idx renders an array element sub-path such as "fields[2]".
func idx(name string, i int) string { return fmt.Sprintf("%s[%d]", name, i) }

// JoinPath adds a sub-path segment ("a" + "b" is "a.b"; an empty a gives b).
func JoinPath(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

func need(sub, field, value string) *problem {
	if value == "" {
		return bad(JoinPath(sub, field), olevent.RuleRequired, "%s is required and must not be empty", JoinPath(sub, field))
	}
	return nil
}

func needUUID(sub, value string) *problem {
	if !isUUID(value) {
		return bad(sub, olevent.RuleUUID, "%s must be a UUID, got %q", sub, Truncate(value))
	}
	return nil
}

// isUUID accepts the canonical 8-4-4-4-12 hex form only (any case).
func isUUID(s string) bool {
	const uuidLen = 36
	if len(s) != uuidLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// firstProblem returns the first non-nil problem.
func firstProblem(ps ...*problem) *problem {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// maxQuotedValue bounds how much of an offending value a message repeats (facet issues and envelope errors).
const maxQuotedValue = 64

// Truncate renders an offending value for a message, cut to maxQuotedValue bytes.
func Truncate(v any) string {
	s := "null"
	if v != nil {
		s = fmt.Sprint(v)
	}
	if len(s) > maxQuotedValue {
		return s[:maxQuotedValue] + "..."
	}
	return s
}
