// Package icebergrest is a small typed client for the read subset of the Apache Iceberg REST Catalog OpenAPI spec
// (served by Polaris, Lakekeeper, Unity Catalog, Glue's REST endpoint, Nessie and Iceberg's own fixture): GET
// /v1/config, namespaces nested and paginated, tables, loadTable with schemas, field ids, snapshots, refs and the
// metadata log, ETag / If-None-Match; and the spec's table-metadata model it decodes into. Standard library only;
// the decision against iceberg-go and a generated client is ADR 0039. It is the REST vocabulary of the catalog
// sync (package icebergsync), split from it so the sync's own code stays small (ADR 0033's package bar).
package icebergrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The client's limits (ADR 0039). A catalog is another service: nothing it answers may make a sync unbounded.
const (
	// MaxResponseBytes caps one response body. loadTable answers carry every snapshot and the metadata log; a
	// table with ~50,000 snapshots is ~30 MB of metadata.
	MaxResponseBytes = 64 << 20
	// DefaultPageSize is the page size asked of list endpoints (servers may answer smaller pages).
	DefaultPageSize = 1000
	// MaxPages caps the pages of one listing: a server that keeps answering next-page-tokens ends the listing
	// with an error rather than looping (1,000 pages of 1,000 is a million names in one namespace).
	MaxPages = 1000
	// DefaultTimeout is one request's time unless the caller's http.Client says otherwise.
	DefaultTimeout = 30 * time.Second
	// defaultSeparator is the spec's namespace separator (the unit separator 0x1F, url encoded) when
	// GET /v1/config names none.
	defaultSeparator = "%1F"
)

// ClientConfig says where a catalog is and how to reach it.
type ClientConfig struct {
	// URI is the catalog's base URI, the one clients are configured with (e.g. http://127.0.0.1:8281 or
	// https://polaris.example.com/api/catalog); the client appends /v1/....
	URI string
	// Warehouse is sent as ?warehouse= to GET /v1/config (Polaris, Lakekeeper and Unity choose the catalog by it).
	Warehouse string
	// Token is a bearer token sent with every request ("" sends none).
	Token string
	// PageSize is asked of list endpoints (0: DefaultPageSize).
	PageSize int
	// HTTP is the client used (nil: one with DefaultTimeout).
	HTTP *http.Client
}

// Client is a catalog after GET /v1/config: its prefix, namespace separator and endpoints are known.
type Client struct {
	base      string // URI without a trailing slash
	prefix    string // "" or the url-encoded prefix segment
	separator string // url-encoded namespace separator
	token     string
	pageSize  int
	http      *http.Client
	config    CatalogConfig
}

// CatalogConfig is GET /v1/config's answer.
type CatalogConfig struct {
	Defaults  map[string]string `json:"defaults"`
	Overrides map[string]string `json:"overrides"`
	// Endpoints the server supports ("GET /v1/{prefix}/namespaces"); absent means the spec's default set.
	Endpoints []string `json:"endpoints,omitempty"`
}

// Property is the effective value of a catalog property: overrides beat defaults.
func (c CatalogConfig) Property(key string) (string, bool) {
	if v, ok := c.Overrides[key]; ok {
		return v, true
	}
	v, ok := c.Defaults[key]
	return v, ok
}

// Namespace is a namespace's levels, outermost first (["lake", "analytics"]).
type Namespace []string

// String is the dotted form people write (lake.analytics).
func (n Namespace) String() string { return strings.Join(n, ".") }

// TableIdent names a table in its namespace.
type TableIdent struct {
	Namespace Namespace `json:"namespace"`
	Name      string    `json:"name"`
}

// String is the dotted form (lake.analytics.orders).
func (t TableIdent) String() string {
	if len(t.Namespace) == 0 {
		return t.Name
	}
	return t.Namespace.String() + "." + t.Name
}

// Error is a catalog's refusal or failure of one request: the operation, the HTTP status and the catalog's own
// error type and message (the spec's IcebergErrorResponse) when it sent one.
type Error struct {
	Op      string // e.g. "loadTable lake.analytics.orders"
	Status  int
	Type    string // e.g. NoSuchTableException
	Message string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("iceberg catalog: %s: HTTP %d", e.Op, e.Status)
	if e.Type != "" {
		msg += " " + e.Type
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// NotFound says whether err is the catalog answering 404 (no such namespace or table).
func NotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// NewClient reads GET /v1/config and returns a client that uses its prefix and namespace separator.
func NewClient(ctx context.Context, cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.URI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("iceberg catalog uri %q: must be an absolute http or https URI", cfg.URI)
	}
	c := &Client{base: strings.TrimRight(cfg.URI, "/"), token: cfg.Token, pageSize: cfg.PageSize, http: cfg.HTTP,
		separator: defaultSeparator}
	if c.pageSize <= 0 {
		c.pageSize = DefaultPageSize
	}
	if c.http == nil {
		c.http = &http.Client{Timeout: DefaultTimeout}
	}
	q := url.Values{}
	if cfg.Warehouse != "" {
		q.Set("warehouse", cfg.Warehouse)
	}
	if _, err := c.getJSON(ctx, "getConfig", "/v1/config", q, "", &c.config); err != nil {
		return nil, err
	}
	if p, ok := c.config.Property("prefix"); ok && strings.Trim(p, "/") != "" {
		// The prefix is path segments, used as pyiceberg and the Java client use it: a prefix of several
		// segments (`catalogs/<id>`) keeps its slashes; each segment is escaped.
		segs := strings.Split(strings.Trim(p, "/"), "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		c.prefix = strings.Join(segs, "/")
	}
	if s, ok := c.config.Property("namespace-separator"); ok && s != "" {
		c.separator = s
	}
	return c, nil
}

// Config is what GET /v1/config answered.
func (c *Client) Config() CatalogConfig { return c.config }

// ListNamespaces lists the namespaces directly under parent (nil: the top level), following every page.
func (c *Client) ListNamespaces(ctx context.Context, parent Namespace) ([]Namespace, error) {
	q := url.Values{}
	if len(parent) > 0 {
		// The query value is the levels joined by the separator itself; Encode escapes the whole.
		sep, err := url.PathUnescape(c.separator)
		if err != nil {
			return nil, fmt.Errorf("iceberg catalog: namespace-separator %q: %w", c.separator, err)
		}
		q.Set("parent", strings.Join(parent, sep))
	}
	var out []Namespace
	err := c.pages(ctx, "listNamespaces "+parent.String(), c.path("namespaces"), q, func(raw []byte) (string, error) {
		var page struct {
			Namespaces    []Namespace `json:"namespaces"`
			NextPageToken *string     `json:"next-page-token"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", err
		}
		out = append(out, page.Namespaces...)
		return deref(page.NextPageToken), nil
	})
	return out, err
}

// LoadNamespace reads a namespace's properties (loadNamespaceMetadata): an `owner` there is the owner of the
// tables below it that name none of their own.
func (c *Client) LoadNamespace(ctx context.Context, ns Namespace) (map[string]string, error) {
	var res struct {
		Properties map[string]string `json:"properties"`
	}
	if _, err := c.getJSON(ctx, "loadNamespace "+ns.String(), c.path("namespaces", c.joinNamespace(ns)), url.Values{}, "", &res); err != nil {
		return nil, err
	}
	return res.Properties, nil
}

// ListTables lists the tables of one namespace, following every page.
func (c *Client) ListTables(ctx context.Context, ns Namespace) ([]TableIdent, error) {
	var out []TableIdent
	p := c.path("namespaces", c.joinNamespace(ns), "tables")
	err := c.pages(ctx, "listTables "+ns.String(), p, url.Values{}, func(raw []byte) (string, error) {
		var page struct {
			Identifiers   []TableIdent `json:"identifiers"`
			NextPageToken *string      `json:"next-page-token"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", err
		}
		out = append(out, page.Identifiers...)
		return deref(page.NextPageToken), nil
	})
	return out, err
}

// Loaded is one loadTable answer: the table's metadata, or NotModified when the catalog answered 304 to the
// ETag the caller sent (then Table is nil and ETag is the one sent).
type Loaded struct {
	Table       *LoadTableResult
	ETag        string
	NotModified bool
}

// LoadTable loads a table's metadata. With etag set it sends If-None-Match and a catalog that supports ETags
// answers 304 when the table's metadata has not changed since.
func (c *Client) LoadTable(ctx context.Context, id TableIdent, etag string) (Loaded, error) {
	p := c.path("namespaces", c.joinNamespace(id.Namespace), "tables", url.PathEscape(id.Name))
	var res LoadTableResult
	h, err := c.getJSON(ctx, "loadTable "+id.String(), p, url.Values{}, etag, &res)
	if err != nil {
		return Loaded{}, err
	}
	if h == nil {
		return Loaded{ETag: etag, NotModified: true}, nil
	}
	return Loaded{Table: &res, ETag: h.Get("ETag")}, nil
}

// path joins /v1, the prefix (if any) and the already-escaped segments.
func (c *Client) path(segments ...string) string {
	parts := []string{"/v1"}
	if c.prefix != "" {
		parts = append(parts, c.prefix)
	}
	return strings.Join(append(parts, segments...), "/")
}

// joinNamespace is the {namespace} path segment: each level escaped, joined by the catalog's url-encoded
// separator.
func (c *Client) joinNamespace(ns Namespace) string {
	enc := make([]string, len(ns))
	for i, level := range ns {
		enc[i] = url.PathEscape(level)
	}
	return strings.Join(enc, c.separator)
}

// pages runs a listing: each page's body goes to take, which returns the next page token ("" ends it).
func (c *Client) pages(ctx context.Context, op, p string, q url.Values, take func([]byte) (string, error)) error {
	seen := map[string]bool{}
	token := ""
	for range MaxPages {
		q.Set("pageSize", strconv.Itoa(c.pageSize))
		if token != "" {
			q.Set("pageToken", token)
		}
		var raw json.RawMessage
		if _, err := c.getJSON(ctx, op, p, q, "", &raw); err != nil {
			return err
		}
		next, err := take(raw)
		if err != nil {
			return fmt.Errorf("iceberg catalog: %s: response: %w", op, err)
		}
		if next == "" {
			return nil
		}
		if seen[next] {
			return fmt.Errorf("iceberg catalog: %s: next-page-token %q repeats (rule: a listing's page tokens never repeat)", op, next)
		}
		seen[next], token = true, next
	}
	return fmt.Errorf("iceberg catalog: %s: more than %d pages (rule: MaxPages)", op, MaxPages)
}

// getJSON GETs base+p?q and decodes a 200 answer into out. It returns the answer's headers, or nil headers and
// no error for a 304 (only possible when etag is set).
func (c *Client) getJSON(ctx context.Context, op, p string, q url.Values, etag string, out any) (http.Header, error) {
	target := c.base + p
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: %s: %w", op, err)
	}
	defer func() { _ = resp.Body.Close() }() // read-only
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("iceberg catalog: %s: reading the response: %w", op, err)
	}
	if len(body) > MaxResponseBytes {
		return nil, fmt.Errorf("iceberg catalog: %s: response over %d bytes (rule: MaxResponseBytes)", op, MaxResponseBytes)
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && etag != "":
		return nil, nil
	case resp.StatusCode != http.StatusOK:
		return nil, catalogError(op, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return nil, fmt.Errorf("iceberg catalog: %s: response: %w", op, err)
	}
	return resp.Header, nil
}

// catalogError reads the spec's {"error": {"message", "type", "code"}} when the body is one.
func catalogError(op string, status int, body []byte) error {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &e) // not every failure (a proxy's 502) has the spec's body
	return &Error{Op: op, Status: status, Type: e.Error.Type, Message: e.Error.Message}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
