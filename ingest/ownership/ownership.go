// Package ownership is the set of namespaces an event's producer owned (held PRODUCE on) when the event was
// accepted. The gateway, or the consumer for events that arrive straight on a Kafka topic, computes it once at
// accept time (ingest/producecheck); it travels with the event in a Kafka header and in the raw-event archive, so
// projection and `headwater replay` decide from the same set whatever the grants say later. The projector applies
// an event's changes only where the set allows (docs/adr/0018-producers-change-only-what-they-own.md).
//
// The zero Set owns everything: events without a principal (authorization off) and events accepted before the
// set was recorded.
package ownership

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Set is the namespaces an event may change. Only a Restricted set limits anything.
type Set struct {
	Restricted bool     `json:"restricted,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"` // canonical, sorted, distinct
}

// All is the unrestricted set.
func All() Set { return Set{} }

// Of is the restricted set of the given canonical namespaces.
func Of(namespaces []string) Set {
	ns := slices.Clone(namespaces)
	slices.Sort(ns)
	return Set{Restricted: true, Namespaces: slices.Compact(ns)}
}

// Owns reports whether the set allows changes in the canonical namespace ns.
func (s Set) Owns(ns string) bool {
	if !s.Restricted {
		return true
	}
	_, found := slices.BinarySearch(s.Namespaces, ns)
	return found
}

// Header is the value of the Kafka header carrying the set (a JSON array of namespaces); ok is false for the
// unrestricted set, which is sent as no header at all.
func (s Set) Header() (value string, ok bool) {
	if !s.Restricted {
		return "", false
	}
	ns := s.Namespaces
	if ns == nil {
		ns = []string{}
	}
	b, _ := json.Marshal(ns)
	return string(b), true
}

// FromHeader reads a header value written by Header.
func FromHeader(value string) (Set, error) {
	var ns []string
	if err := json.Unmarshal([]byte(value), &ns); err != nil {
		return Set{}, fmt.Errorf("ownership header: %w", err)
	}
	return Of(ns), nil
}
