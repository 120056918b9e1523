package authz

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// minRedactKeyLen is the shortest accepted placeholder key.
const minRedactKeyLen = 32

// Redactor makes the ids of REDACT placeholders: an HMAC over (principal, visible node, direction), so a
// placeholder is stable for one principal across requests and replicas, differs between principals, and reveals
// nothing about what it hides.
type Redactor struct{ key []byte }

// NewRedactor returns a redactor; the key must be at least 32 bytes and the same on every replica.
func NewRedactor(key string) (*Redactor, error) {
	if len(key) < minRedactKeyLen {
		return nil, fmt.Errorf("%w: redact key must be at least %d bytes", ErrInvalid, minRedactKeyLen)
	}
	return &Redactor{key: []byte(key)}, nil
}

// PlaceholderID is the id of the placeholder standing for every hidden neighbour of visibleKey in direction
// (e.g. "UPSTREAM", "DOWNSTREAM") for principal p.
func (r *Redactor) PlaceholderID(p Principal, visibleKey, direction string) string {
	m := hmac.New(sha256.New, r.key)
	for _, part := range []string{"hw-redact-v1", p.Kind, p.Subject, visibleKey, direction} {
		m.Write([]byte(part))
		m.Write([]byte{0x1f})
	}
	return "r" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:18])
}
