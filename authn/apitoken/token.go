package apitoken

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/headwater-data/headwater/authn"
)

// API token format: "hw_<id>_<secret>", id 16 lower-case hex characters (8 random bytes, the lookup key),
// secret 43 base64url characters (32 random bytes). Only SHA-256("hw-token-v1:" + id + ":" + secret) is stored:
// the secret has 256 bits of entropy, so a slow password hash would add latency to every request and no
// resistance (there is no dictionary to attack).
const (
	tokenIDBytes   = 8
	tokenSecBytes  = 32
	tokenIDLen     = 2 * tokenIDBytes
	tokenSecretLen = 43
	tokenHashTag   = "hw-token-v1:"
)

// newTokenSecret returns a fresh (id, secret, full token).
func newTokenSecret() (id, secret, token string, err error) {
	idb := make([]byte, tokenIDBytes)
	sb := make([]byte, tokenSecBytes)
	if _, err = rand.Read(idb); err != nil {
		return "", "", "", fmt.Errorf("token randomness: %w", err)
	}
	if _, err = rand.Read(sb); err != nil {
		return "", "", "", fmt.Errorf("token randomness: %w", err)
	}
	id, secret = hex.EncodeToString(idb), base64.RawURLEncoding.EncodeToString(sb)
	return id, secret, authn.APITokenPrefix + id + "_" + secret, nil
}

// parseToken splits a token into id and secret, checking the shape.
func parseToken(raw string) (id, secret string, err error) {
	rest, ok := strings.CutPrefix(raw, authn.APITokenPrefix)
	if !ok || len(rest) != tokenIDLen+1+tokenSecretLen || rest[tokenIDLen] != '_' {
		return "", "", fmt.Errorf("%w: not an api token", authn.ErrInvalid)
	}
	id, secret = rest[:tokenIDLen], rest[tokenIDLen+1:]
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", "", fmt.Errorf("%w: malformed token id", authn.ErrInvalid)
	}
	if _, err := base64.RawURLEncoding.DecodeString(secret); err != nil {
		return "", "", fmt.Errorf("%w: malformed token secret", authn.ErrInvalid)
	}
	return id, secret, nil
}

func hashSecret(id, secret string) string {
	h := sha256.Sum256([]byte(tokenHashTag + id + ":" + secret))
	return hex.EncodeToString(h[:])
}

// secretMatches compares in constant time.
func secretMatches(id, secret, storedHash string) bool {
	return subtle.ConstantTimeCompare([]byte(hashSecret(id, secret)), []byte(storedHash)) == 1
}
