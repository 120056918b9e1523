// Package seal signs and seals the opaque cursors of the query API with the server's cursor key, and makes the
// short stable digests cursors bind principals and arguments with. It knows nothing of what a cursor holds.
//
// Invariants: a signed payload verifies only under the same key; a sealed payload can be neither read nor altered
// by its holder and opens only with the same key and context; equal inputs give equal outputs (answers stay
// byte-identical whatever the caller cannot see).
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// MinKey is the shortest accepted cursor key.
const MinKey = 32

// Codec signs and seals with one key.
type Codec struct{ Key []byte }

// RandomKey is a fresh MinKey-byte key (a server without a configured key: cursors do not survive a restart).
func RandomKey() []byte {
	k := make([]byte, MinKey)
	_, _ = rand.Read(k)
	return k
}

// Sign is the HMAC-SHA256 of payload.
func (c Codec) Sign(payload []byte) []byte {
	m := hmac.New(sha256.New, c.Key)
	m.Write(payload)
	return m.Sum(nil)
}

// Seal encrypts and authenticates a payload for one context (AES-256-GCM under a key derived from the cursor
// key): the holder can neither read nor alter it, and it opens only with the same context. Search cursors are
// sealed because a page's position may be a hit the caller may not see. The nonce is derived from the context and
// the payload (a synthetic IV), so the same position gives the same cursor: answers stay byte-identical whatever
// the caller cannot see, and equal cursors reveal only that two positions are equal.
func (c Codec) Seal(plain []byte, context string) (string, error) {
	aead, err := c.aead()
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, c.Key)
	m.Write([]byte(context))
	m.Write([]byte{0})
	m.Write(plain)
	nonce := m.Sum(nil)[:aead.NonceSize()]
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(context))), nil
}

// Open reverses Seal; any failure is false.
func (c Codec) Open(s, context string) ([]byte, bool) {
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

func (c Codec) aead() (cipher.AEAD, error) {
	k := sha256.Sum256(append([]byte("headwater sealed cursor\x00"), c.Key...))
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// Digest is a short stable hash for principals and argument strings.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}
