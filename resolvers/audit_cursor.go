package resolvers

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// Audit cursors hold, per partition, the offset the next page reads below, and a hash of what the cursor is
// bound to (the caller and the filters), so a cursor replayed by another principal or with other filters is
// BAD_REQUEST. They are not signed: offsets are not secret, only principals who may read the whole stream may
// use one, and a forged cursor can only select another window of what its holder may read anyway.

// auditCursorPrefix versions the cursor format.
const auditCursorPrefix = "ac1."

// maxAuditCursorLen bounds a cursor before it is decoded.
const maxAuditCursorLen = 4096

type auditCursor struct {
	Binding string          `json:"b"`
	Before  map[int32]int64 `json:"p"`
}

const badAuditCursor = "invalid cursor: pass back the endCursor of the previous page with the same filters"

func encodeAuditCursor(before map[int32]int64, binding string) string {
	b, _ := json.Marshal(auditCursor{Binding: bindingHash(binding), Before: before}) // maps of numbers always encode
	return auditCursorPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func decodeAuditCursor(s, binding string) (map[int32]int64, error) {
	payload, ok := strings.CutPrefix(s, auditCursorPrefix)
	if !ok || len(s) > maxAuditCursorLen {
		return nil, auditBadRequest(badAuditCursor)
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var c auditCursor
	if err != nil || json.Unmarshal(raw, &c) != nil || c.Binding != bindingHash(binding) || c.Before == nil {
		return nil, auditBadRequest(badAuditCursor)
	}
	for p, off := range c.Before {
		if p < 0 || off < 0 {
			return nil, auditBadRequest(badAuditCursor)
		}
	}
	return c.Before, nil
}

func bindingHash(binding string) string {
	h := sha256.Sum256([]byte("hw-audit-cursor-v1\x00" + binding))
	return hex.EncodeToString(h[:12])
}
