package declare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/internal/httpbody"
	"github.com/headwater-data/headwater/internal/rules"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
)

// Limits of the endpoint (its own, separate from the event gateway's body limit: a manifest runs to tens of MB).
const (
	// MaxManifestBytes bounds one manifest, before and after gzip (the decompressed bound stops a gzip bomb).
	MaxManifestBytes int64 = 64 << 20
	// MaxConcurrent bounds the declarations one process reads at once; more answer 429 with Retry-After.
	MaxConcurrent = 2
)

// PathDbt is the dbt declaration endpoint (POST, {project} in the path: the manifest's project_name).
const PathDbt = "/api/v1/declare/dbt/{project}"

// OpDeclareDbt is the audit operation of a dbt declaration.
const OpDeclareDbt = "declareDbt"

// Submitter sends server-built events through the gateway's path (gateway.Gateway).
type Submitter interface {
	Submit(ctx context.Context, events [][]byte) (gateway.Submission, error)
}

// Recorder writes one audit record of a declaration by p: allowed or refused, and why (cmd/headwater wires it to
// the audit writer; ingest packages use only the authz core, ADR 0029).
type Recorder func(ctx context.Context, p authz.Principal, op string, allowed bool, reason string) error

// Handler serves POST /api/v1/declare/dbt/{project}?jobNamespace=..&datasetNamespace=.. with the manifest as the
// body (Content-Encoding identity or gzip).
type Handler struct {
	sub   Submitter
	aud   Recorder
	log   *slog.Logger
	rr    RecordReader
	vis   Visibility
	clock func() time.Time
	slots chan struct{}
}

// NewHandler returns the endpoint; a nil recorder audits nothing.
func NewHandler(sub Submitter, aud Recorder, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{sub: sub, aud: aud, log: log, slots: make(chan struct{}, MaxConcurrent)}
}

// Register mounts the endpoint on mux.
func (h *Handler) Register(mux *http.ServeMux) { mux.Handle("POST "+PathDbt, h) }

// WithCurrent makes the handler read the project's current declarations (as the caller may see them) and
// withdraw the nodes the new manifest no longer has (Withdrawals); without it removed nodes stay declared.
func (h *Handler) WithCurrent(rr RecordReader, vis Visibility, clock func() time.Time) *Handler {
	h.rr, h.vis, h.clock = rr, vis, clock
	return h
}

// Answer is the JSON body of a declaration's answer.
type Answer struct {
	Project string `json:"project"`
	// Accepted says the declaration's events were made durable (all of them); they are projected asynchronously.
	Accepted bool `json:"accepted"`
	// EventIDs are the declaration's event ids (content ids: the same manifest gives the same ids).
	EventIDs []string `json:"eventIds,omitempty"`
	Summary  Summary  `json:"summary"`
	// Refused are the events the gateway refused (field, rule), when not accepted.
	Refused []gateway.Result `json:"refused,omitempty"`
	Error   string           `json:"error,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		httpbody.LeaveUnread(w)
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusTooManyRequests, Answer{Error: fmt.Sprintf("busy: at most %d declarations at once", MaxConcurrent)})
		return
	}
	ctx, caller, project := r.Context(), authz.FromContext(r.Context()), r.PathValue("project")
	ans := Answer{Project: project}
	body, status, err := openBody(w, r)
	if err == nil {
		var events [][]byte
		events, ans.Summary, status, err = h.read(ctx, body, project, r.URL.Query())
		if err == nil {
			status, err = h.submit(ctx, &ans, events)
		}
	}
	if err != nil {
		ans.Error = err.Error()
	}
	if aerr := h.record(ctx, caller, &ans, status); aerr != nil {
		h.log.Error("declaration not audited", "project", project, "err", aerr)
		writeJSON(w, http.StatusServiceUnavailable, Answer{Project: project, Error: "the audit trail is unavailable, retry later"})
		return
	}
	writeJSON(w, status, ans)
}

// read decodes the manifest and builds its events.
func (h *Handler) read(ctx context.Context, body io.Reader, project string, q map[string][]string) ([][]byte, Summary, int, error) {
	m, err := dbtmanifest.Read(body)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, Summary{}, http.StatusRequestEntityTooLarge, errTooLarge
		}
		return nil, Summary{}, http.StatusBadRequest, err
	}
	if m.ProjectName != project {
		return nil, Summary{}, http.StatusBadRequest,
			fmt.Errorf("project: the path names %q but metadata.project_name is %q", project, m.ProjectName)
	}
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	o := Options{JobNamespace: get("jobNamespace"), DatasetNamespace: get("datasetNamespace")}
	events, sum, err := Events(m, o)
	if err != nil {
		return nil, sum, http.StatusBadRequest, err
	}
	if h.rr != nil {
		cur, err := ReadCurrent(ctx, h.rr, h.vis, o.JobNamespace, h.clock())
		if err != nil {
			return nil, sum, statusOf(err), err
		}
		w, ids, err := Withdrawals(m, cur, o)
		if err != nil {
			return nil, sum, http.StatusBadRequest, err
		}
		events, sum.Withdrawn = append(events, w...), ids
	}
	return events, sum, http.StatusOK, nil
}

// submit sends the events through the gateway's path and fills the answer.
func (h *Handler) submit(ctx context.Context, ans *Answer, events [][]byte) (int, error) {
	sub, err := h.sub.Submit(ctx, events)
	if err != nil {
		return http.StatusServiceUnavailable, err
	}
	ans.Accepted = sub.Accepted
	status := http.StatusOK
	for _, res := range sub.Results {
		if res.Status == "accepted" {
			ans.EventIDs = append(ans.EventIDs, res.EventID)
		}
		if res.Status != "rejected" {
			continue
		}
		ans.Refused = append(ans.Refused, res)
		if status == http.StatusOK {
			status = http.StatusBadRequest
		}
		if res.Error != nil && res.Error.Rule == rules.ProducePermission {
			status = http.StatusForbidden
		}
	}
	if !sub.Accepted {
		first := ans.Refused[0].Error
		return status, fmt.Errorf("%d of %d events refused, nothing declared; first: %s: %s (%s)", len(ans.Refused),
			len(events), first.Field, first.Rule, first.Message)
	}
	return status, nil
}

// record writes the declaration's audit record: ALLOW when accepted, DENY otherwise (with the reason).
func (h *Handler) record(ctx context.Context, p authz.Principal, ans *Answer, status int) error {
	if h.aud == nil {
		return nil
	}
	reason := fmt.Sprintf("dbt project %s: %d jobs, %d edges declared (%d events)",
		ans.Project, ans.Summary.Jobs, ans.Summary.Edges, len(ans.EventIDs))
	if !ans.Accepted {
		reason = fmt.Sprintf("dbt project %s: refused (%d): %s", ans.Project, status, ans.Error)
	}
	return h.aud(ctx, p, OpDeclareDbt, ans.Accepted, reason)
}

// openBody bounds the body and gunzips it when Content-Encoding says gzip.
func openBody(w http.ResponseWriter, r *http.Request) (io.Reader, int, error) {
	return httpbody.Open(w, r, MaxManifestBytes, errTooLarge)
}

// errTooLarge is the body-limit refusal (rule max-bytes).
var errTooLarge = fmt.Errorf("body: %s: exceeds %d bytes (before or after gzip)", rules.MaxBytes, MaxManifestBytes)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
