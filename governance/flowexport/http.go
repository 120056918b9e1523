// Package flowexport serves a piiFlow for auditors as CSV or JSON (GET /api/v1/governance/flow.csv and .json,
// docs/governance.md, ADR 0055): the piiFlow arguments as query parameters, the same authentication (the serve
// mux's middleware), the same permission checks (it answers lineage.Service.PiiFlow, which checks while
// expanding) and the same audit (one record per call, naming the operation and what the flow touched).
//
// Invariants: the CSV header is fixed (Header) and every row has its columns; a parameter the endpoint does not
// know is a 400 naming it; what the caller may not see is not in the export (the flow never holds it).
package flowexport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/lineage"
)

// Paths of the export.
const (
	PathCSV  = "/api/v1/governance/flow.csv"
	PathJSON = "/api/v1/governance/flow.json"
)

// maxParamBytes bounds one query parameter's value.
const maxParamBytes = 1024

// Flows is what the export asks (lineage.Service).
type Flows interface {
	PiiFlow(ctx context.Context, a lineage.PiiFlowArgs) (*api.PiiFlow, error)
	FlowNames(ctx context.Context, f *api.PiiFlow) (map[string]*api.Dataset, map[string]*api.Job, error)
}

var _ Flows = (*lineage.Service)(nil)

// Handler serves the export.
type Handler struct {
	flows   Flows
	auditor audit.Auditor // nil: no audit (tests without one)
	clock   func() time.Time
	log     *slog.Logger
}

// NewHandler returns the export endpoint.
func NewHandler(flows Flows, auditor audit.Auditor, clock func() time.Time, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if clock == nil {
		clock = time.Now
	}
	return &Handler{flows: flows, auditor: auditor, clock: clock, log: log}
}

// Register mounts the endpoint on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PathCSV, func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, PathCSV) })
	mux.HandleFunc("GET "+PathJSON, func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, PathJSON) })
}

// params are the query parameters the export reads: piiFlow's arguments, `from` spelled out.
var params = []string{"tag", "namespace", "name", "field", "depth", "asOf"}

// Args parses the query parameters into piiFlow's arguments; an unknown or malformed one is an error naming it.
func Args(q map[string][]string) (lineage.PiiFlowArgs, error) {
	var a lineage.PiiFlowArgs
	for k, vs := range q {
		switch {
		case !slices.Contains(params, k):
			return a, api.BadRequest("%s: unknown parameter (the parameters are %s)", k, strings.Join(params, ", "))
		case len(vs) != 1:
			return a, api.BadRequest("%s: give it once", k)
		case len(vs[0]) > maxParamBytes:
			return a, api.BadRequest("%s: longer than %d bytes", k, maxParamBytes)
		}
	}
	get := func(k string) string {
		if vs := q[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	a.Tag = get("tag")
	if a.Tag == "" {
		return a, api.BadRequest("tag: required (a tag class: pii, pii.email, ...)")
	}
	if d := get("depth"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil {
			return a, api.BadRequest("depth: an integer, got %q", d)
		}
		a.Depth = &n
	}
	if s := get("asOf"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return a, api.BadRequest("asOf: an RFC 3339 time (2026-12-01T00:00:00Z), got %q", s)
		}
		a.AsOf = &t
	}
	ns, name, field := get("namespace"), get("name"), get("field")
	switch {
	case ns == "" && name == "" && field == "":
	case ns == "" || name == "":
		return a, api.BadRequest("namespace, name: give both (the dataset, or the field's dataset with field), or neither for the whole graph")
	case field != "":
		a.From = &api.NodeRef{Field: &api.FieldRef{Namespace: ns, Name: name, Field: field}}
	default:
		a.From = &api.NodeRef{Dataset: &api.DatasetRef{Namespace: ns, Name: name}}
	}
	return a, nil
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, path string) {
	ctx := r.Context()
	var trail *audit.RequestAudit
	if h.auditor != nil {
		trail = audit.NewRequestAudit(authz.FromContext(ctx), "http GET "+path, requestID(r), h.clock)
		ctx = authz.WithRequestAudit(ctx, trail)
		defer func() {
			if err := trail.Flush(context.WithoutCancel(ctx), h.auditor); err != nil {
				h.log.Error("audit record not written", "err", err)
			}
		}()
	}
	a, err := Args(r.URL.Query())
	if err != nil {
		h.refuse(w, err)
		return
	}
	if trail != nil {
		trail.Audited(fmt.Sprintf("piiFlow(tag: %q)", a.Tag)) // also when the flow is refused below
	}
	f, err := h.flows.PiiFlow(ctx, a)
	if err != nil {
		h.refuse(w, err)
		return
	}
	ds, js, err := h.flows.FlowNames(ctx, f)
	if err != nil {
		h.refuse(w, err)
		return
	}
	x := exportOf(f, ds, js)
	w.Header().Set("X-Headwater-Truncated", strconv.FormatBool(f.Truncated))
	w.Header().Set("Cache-Control", "no-store")
	if path == PathCSV {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="flow-`+safeName(f.Tag)+`.csv"`)
		if err := writeCSV(w, x); err != nil {
			h.log.Warn("flow export: writing the answer", "err", err)
		}
		return
	}
	writeJSON(w, http.StatusOK, x)
}

// refuse answers an error: 400 naming the parameter, 404 (a `from` that does not exist or you may not see, the
// same answer), 403, 503 with Retry-After, 500 otherwise (logged, never shown).
func (h *Handler) refuse(w http.ResponseWriter, err error) {
	var e *api.Error
	if !errors.As(err, &e) {
		h.log.Error("flow export failed", "err", err)
		writeJSON(w, http.StatusInternalServerError, errorAnswer{Error: "internal error"})
		return
	}
	status := http.StatusInternalServerError
	switch {
	case errors.Is(err, api.ErrBadRequest):
		status = http.StatusBadRequest
	case errors.Is(err, api.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, api.ErrForbidden):
		status = http.StatusForbidden
	case errors.Is(err, api.ErrUnavailable):
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "5")
	}
	if status == http.StatusInternalServerError {
		h.log.Error("flow export failed", "err", err)
		writeJSON(w, status, errorAnswer{Error: "internal error"})
		return
	}
	writeJSON(w, status, errorAnswer{Error: e.Message})
}

type errorAnswer struct {
	Error string `json:"error"`
}

// requestID is the proxy's X-Request-Id (bounded), else a random one (as the GraphQL endpoint's).
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 {
		return id
	}
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
