package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/httpbody"
	"github.com/headwater-data/headwater/inventory"
	"github.com/headwater-data/headwater/inventory/manage"
)

// MaxBodyBytes bounds one registration body, before and after gzip (a dbt manifest runs to tens of MB; the
// decompressed bound stops a gzip bomb). It is the endpoint's own limit, separate from the event gateway's.
const MaxBodyBytes int64 = 64 << 20

// Path is the registration endpoint (POST, {source} in the path).
const Path = "/api/v1/inventory/{source}"

// MaxConcurrent bounds the registrations one process reads at once (each may parse up to MaxBodyBytes); more
// answer 429 with Retry-After.
const MaxConcurrent = 2

// Registrar is what the endpoint calls (Service).
type Registrar interface {
	Register(ctx context.Context, caller authz.Principal, req Request) (Result, error)
}

var _ Registrar = (*Service)(nil)

// Handler serves POST /api/v1/inventory/{source}?kind=dbt|airflow|list[&jobNamespace=..][&datasetNamespace=..]
// [&schedule=..][&scheduleDag=..] with the source's file as the body (Content-Encoding identity or gzip), streamed to its reader.
type Handler struct {
	reg   Registrar
	log   *slog.Logger
	slots chan struct{}
}

// NewHandler returns the endpoint.
func NewHandler(reg Registrar, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{reg: reg, log: log, slots: make(chan struct{}, MaxConcurrent)}
}

// Register mounts the endpoint on mux.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle("POST "+Path, h) }

// Answer is the JSON body of a 200.
type Answer struct {
	Source    string `json:"source"`
	Unchanged bool   `json:"unchanged"`
	Jobs      int    `json:"jobs"`
	Added     int    `json:"added"`
	Updated   int    `json:"updated"`
	Retired   int    `json:"retired"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		httpbody.LeaveUnread(w)
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusTooManyRequests, manage.ErrorAnswer{Error: fmt.Sprintf("busy: at most %d registrations at once", MaxConcurrent)})
		return
	}
	q := r.URL.Query()
	kind, err := inventory.ParseKind(q.Get("kind"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, manage.ErrorAnswer{Error: err.Error()})
		return
	}
	body, status, err := openBody(w, r)
	if err != nil {
		writeJSON(w, status, manage.ErrorAnswer{Error: err.Error()})
		return
	}
	res, err := h.reg.Register(r.Context(), authz.FromContext(r.Context()), Request{Source: r.PathValue("source"),
		Kind: kind, JobNamespace: q.Get("jobNamespace"), DatasetNamespace: q.Get("datasetNamespace"),
		Schedule: q.Get("schedule"), ScheduleDag: q.Get("scheduleDag"), Body: body})
	if err != nil {
		h.refuse(w, err)
		return
	}
	writeJSON(w, http.StatusOK, Answer{Source: res.Source, Unchanged: res.Unchanged, Jobs: res.Jobs,
		Added: res.Added, Updated: res.Updated, Retired: res.Retired})
}

// openBody bounds the body and gunzips it when Content-Encoding says gzip.
func openBody(w http.ResponseWriter, r *http.Request) (io.Reader, int, error) {
	return httpbody.Open(w, r, MaxBodyBytes, errTooLarge)
}

// errTooLarge is the body-limit refusal.
var errTooLarge = fmt.Errorf("body: exceeds %d bytes (before or after gzip)", MaxBodyBytes)

func (h *Handler) refuse(w http.ResponseWriter, err error) {
	if errors.Is(err, errTooLarge) {
		writeJSON(w, http.StatusRequestEntityTooLarge, manage.ErrorAnswer{Error: errTooLarge.Error()})
		return
	}
	manage.Refuse(w, h.log, err)
}

func writeJSON(w http.ResponseWriter, status int, v any) { manage.WriteJSON(w, status, v) }
