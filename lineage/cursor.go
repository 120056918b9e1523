package lineage

import (
	"crypto/hmac"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/internal/seal"
	"github.com/headwater-data/headwater/lineage/walk"
)

// cursorVersion changes whenever the cursor layout or its meaning does; older cursors are refused. 2: the walk
// goes level by level across pages (a version-1 reached set may hold nodes marked at a depth that was not their
// shortest, whose edges the continuation would never return).
const cursorVersion = 2

// cursorState is everything a next page needs: the walk's continuation (frontier and the sets of what was
// reached and returned, in 8-byte hashes to keep the cursor small), bound to a principal and arguments. The
// embedded State's fields follow AsOf in the JSON, as before the walk had a package of its own.
type cursorState struct {
	V          int    `json:"v"`
	Subject    string `json:"p"` // hash of the principal
	Args       string `json:"a"` // hash of the canonical arguments
	AsOf       int64  `json:"t"` // pinned asOf
	walk.State        // f, r, n, e
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

// digest is a short stable hash for principals and argument strings.
func digest(s string) string { return seal.Digest(s) }
