package walk

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strings"
)

// Entry is one node waiting to be expanded in one direction (a frontier entry).
type Entry struct {
	Key   string  `json:"k"`
	Kind  HopKind `json:"t"`
	Down  bool    `json:"d,omitempty"`
	Depth int     `json:"h"`
	Skip  int     `json:"s,omitempty"` // neighbours already returned (fan-out continuation)
	// Probed: the page that returned the node already looked for hidden neighbours this way (REDACT) and
	// showed the placeholder if there were any; expanding the entry need not look again.
	Probed bool `json:"p,omitempty"`
}

func (e Entry) less(o Entry) int {
	return strings.Compare(e.sortKey(), o.sortKey())
}

func (e Entry) sortKey() string {
	d := "u"
	if e.Down {
		d = "d"
	}
	return d + string(e.Kind) + e.Key
}

// State is a walk's continuation: the frontier still to expand and what was reached and returned so far
// (hash sets, hashSet.pack). A cursor carries it from one page to the next.
type State struct {
	Frontier []Entry `json:"f"`
	Reached  []byte  `json:"r"` // (direction, node) pairs already reached
	Nodes    []byte  `json:"n"` // nodes already returned
	Edges    []byte  `json:"e"` // edges already returned
}

// hashSet is a set of 8-byte hashes of strings.
type hashSet map[uint64]struct{}

func h64(s string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(s))
	return f.Sum64()
}

func (h hashSet) has(s string) bool { _, ok := h[h64(s)]; return ok }
func (h hashSet) add(s string)      { h[h64(s)] = struct{}{} }

// pack serialises the set in sorted order (deterministic cursors).
func (h hashSet) pack() []byte {
	keys := make([]uint64, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]byte, 8*len(keys))
	for i, k := range keys {
		binary.BigEndian.PutUint64(out[8*i:], k)
	}
	return out
}

func unpack(b []byte) hashSet {
	h := make(hashSet, len(b)/8)
	for i := 0; i+8 <= len(b); i += 8 {
		h[binary.BigEndian.Uint64(b[i:])] = struct{}{}
	}
	return h
}
