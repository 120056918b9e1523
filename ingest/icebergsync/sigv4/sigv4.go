// Package sigv4 signs the Iceberg REST client's requests with AWS Signature Version 4, the way AWS Glue's Iceberg
// REST endpoint (service "glue", https://glue.<region>.amazonaws.com/iceberg) and S3 Tables' (service "s3tables")
// want them. The signing itself is the AWS SDK for Go v2's signer (github.com/aws/aws-sdk-go-v2/aws/signer/v4);
// this package only makes it an http.RoundTripper: it hashes the body, sets X-Amz-Content-Sha256 and signs each
// request, including retries, at the moment it is sent (ADR 0059).
package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// MaxSignedBodyBytes bounds a request body the transport reads to hash (the Iceberg REST client sends none larger
// than a commit; a larger one is refused rather than buffered).
const MaxSignedBodyBytes = 16 << 20

// Credentials are an AWS access key (and the session token of temporary credentials).
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// Transport signs every request it sends for Service in Region, then hands it to Base.
type Transport struct {
	Base    http.RoundTripper // nil: http.DefaultTransport
	Region  string
	Service string
	Creds   Credentials
	Now     func() time.Time // nil: time.Now
	signer  *v4.Signer
}

// New returns a Transport over base.
func New(base http.RoundTripper, region, service string, creds Credentials) (*Transport, error) {
	switch {
	case region == "":
		return nil, errors.New("sigv4: region is required")
	case service == "":
		return nil, errors.New("sigv4: service is required")
	case creds.AccessKeyID == "" || creds.SecretAccessKey == "":
		return nil, errors.New("sigv4: an access key id and a secret access key are required")
	}
	return &Transport{Base: base, Region: region, Service: service, Creds: creds, signer: v4.NewSigner()}, nil
}

// RoundTrip implements http.RoundTripper. It signs a clone of req (a RoundTripper must not change its request).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	hash, err := bodyHash(out)
	if err != nil {
		return nil, err
	}
	out.Header.Set("X-Amz-Content-Sha256", hash)
	if err := t.Sign(out.Context(), out, hash); err != nil {
		return nil, err
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(out)
}

// Sign signs req in place, its payload's hex SHA-256 given.
func (t *Transport) Sign(ctx context.Context, req *http.Request, payloadHash string) error {
	now := time.Now
	if t.Now != nil {
		now = t.Now
	}
	signer := t.signer
	if signer == nil {
		signer = v4.NewSigner()
	}
	creds := aws.Credentials{AccessKeyID: t.Creds.AccessKeyID, SecretAccessKey: t.Creds.SecretAccessKey, SessionToken: t.Creds.SessionToken}
	if err := signer.SignHTTP(ctx, creds, req, payloadHash, t.Service, t.Region, now().UTC()); err != nil {
		return fmt.Errorf("sigv4: %w", err)
	}
	return nil
}

// bodyHash reads req's body (at most MaxSignedBodyBytes), puts it back and answers its hex SHA-256.
func bodyHash(req *http.Request) (string, error) {
	if req.Body == nil || req.Body == http.NoBody {
		sum := sha256.Sum256(nil)
		return hex.EncodeToString(sum[:]), nil
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, MaxSignedBodyBytes+1))
	_ = req.Body.Close()
	if err != nil {
		return "", fmt.Errorf("sigv4: reading the body to sign: %w", err)
	}
	if len(b) > MaxSignedBodyBytes {
		return "", fmt.Errorf("sigv4: a request body over %d bytes is not signed", MaxSignedBodyBytes)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.ContentLength = int64(len(b))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
