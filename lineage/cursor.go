package lineage

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/internal/seal"
)

// cursorVersion changes whenever the cursor layout or its meaning does; older cursors are refused. 2: the walk
// goes level by level across pages (a version-1 reached set may hold nodes marked at a depth that was not their
// shortest, whose edges the continuation would never return).
const cursorVersion = 2

// frontierEntry is one node waiting to be expanded in one direction.
type frontierEntry struct {
	Key   string  `json:"k"`
	Kind  HopKind `json:"t"`
	Down  bool    `json:"d,omitempty"`
	Depth int     `json:"h"`
	Skip  int     `json:"s,omitempty"` // neighbours already returned (fan-out continuation)
	// Probed: the page that returned the node already looked for hidden neighbours this way (REDACT) and
	// showed the placeholder if there were any; expanding the entry need not look again.
	Probed bool `json:"p,omitempty"`
}

func (e frontierEntry) less(o frontierEntry) int {
	return strings.Compare(e.sortKey(), o.sortKey())
}

func (e frontierEntry) sortKey() string {
	d := "u"
	if e.Down {
		d = "d"
	}
	return d + string(e.Kind) + e.Key
}

// cursorState is everything a next page needs. Sets are 8-byte hashes to keep the cursor small.
type cursorState struct {
	V        int             `json:"v"`
	Subject  string          `json:"p"` // hash of the principal
	Args     string          `json:"a"` // hash of the canonical arguments
	AsOf     int64           `json:"t"` // pinned asOf
	Frontier []frontierEntry `json:"f"`
	Reached  []byte          `json:"r"` // (direction, node) pairs already reached
	Nodes    []byte          `json:"n"` // nodes already returned
	Edges    []byte          `json:"e"` // edges already returned
}

// cursorCodec signs and verifies cursors with the server key.
type cursorCodec struct{ key []byte }

func (c cursorCodec) sign(payload []byte) []byte { return seal.Codec{Key: c.key}.Sign(payload) }

func (c cursorCodec) encode(st cursorState) (string, error) {
	st.V = cursorVersion
	payload, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(c.sign(payload)), nil
}

// decode verifies the signature, the principal and the arguments. Every failure is the same BAD_REQUEST.
func (c cursorCodec) decode(s, subject, args string) (cursorState, error) {
	bad := api.BadRequest("invalid cursor: it was issued for another principal or other arguments, or is corrupt")
	p, sig, ok := strings.Cut(s, ".")
	payload, err1 := base64.RawURLEncoding.DecodeString(p)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, c.sign(payload)) {
		return cursorState{}, bad
	}
	var st cursorState
	if err := json.Unmarshal(payload, &st); err != nil || st.V != cursorVersion || st.Subject != subject || st.Args != args {
		return cursorState{}, bad
	}
	return st, nil
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

// digest is a short stable hash for principals and argument strings.
func digest(s string) string { return seal.Digest(s) }
