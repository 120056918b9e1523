package lineage

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strings"
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

func (c cursorCodec) encode(st cursorState) (string, error) {
	st.V = cursorVersion
	payload, err := json.Marshal(st)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(c.sign(payload)), nil
}

func (c cursorCodec) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(payload)
	return m.Sum(nil)
}

// decode verifies the signature, the principal and the arguments. Every failure is the same BAD_REQUEST.
func (c cursorCodec) decode(s, subject, args string) (cursorState, error) {
	bad := badRequest("invalid cursor: it was issued for another principal or other arguments, or is corrupt")
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
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// seal encrypts and authenticates a payload for one context (AES-256-GCM under a key derived from the cursor
// key): the holder can neither read nor alter it, and it opens only with the same context. Search cursors are
// sealed because a page's position may be a hit the caller may not see. The nonce is derived from the context and
// the payload (a synthetic IV), so the same position gives the same cursor: answers stay byte-identical whatever
// the caller cannot see, and equal cursors reveal only that two positions are equal.
func (c cursorCodec) seal(plain []byte, context string) (string, error) {
	aead, err := c.aead()
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(context))
	m.Write([]byte{0})
	m.Write(plain)
	nonce := m.Sum(nil)[:aead.NonceSize()]
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(context))), nil
}

// open reverses seal; any failure is false.
func (c cursorCodec) open(s, context string) ([]byte, bool) {
	aead, err := c.aead()
	if err != nil {
		return nil, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, false
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(context))
	return plain, err == nil
}

func (c cursorCodec) aead() (cipher.AEAD, error) {
	k := sha256.Sum256(append([]byte("headwater sealed cursor\x00"), c.key...))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
