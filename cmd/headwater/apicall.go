package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// apiCall sends one request of a CLI subcommand to a Headwater server's HTTP API (a bearer token when set,
// the given headers) and returns the answer's body, at most limit bytes; a status other than 200 is an error
// naming what (the subcommand), the status and the server's answer.
func apiCall(ctx context.Context, what, method, target, token string, body io.Reader, headers map[string]string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", what, resp.Status, strings.TrimSpace(string(b)))
	}
	return b, nil
}
