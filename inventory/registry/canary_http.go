package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/headwater-data/headwater/authz"
)

// CanaryPath is the canary endpoint: PUT registers (or replaces) the canary {name} with a JSON body
// {"from": {namespace, name, field}, "to": {...}, "job": {namespace, name}, "transformation": "DIRECT"};
// DELETE retires it. The same permission and audit as the GraphQL operations.
const CanaryPath = "/api/v1/canaries/{name}"

// MaxCanaryBodyBytes bounds one canary registration body.
const MaxCanaryBodyBytes int64 = 16 << 10

// CanaryRegistrar is what the canary endpoint calls (Service).
type CanaryRegistrar interface {
	RegisterCanary(ctx context.Context, caller authz.Principal, c Canary) (Canary, error)
	RetireCanary(ctx context.Context, caller authz.Principal, name string) error
}

var _ CanaryRegistrar = (*Service)(nil)

// CanaryBody is the JSON body of a canary registration.
type CanaryBody struct {
	From           CanaryEndBody                     `json:"from"`
	To             CanaryEndBody                     `json:"to"`
	Job            *struct{ Namespace, Name string } `json:"job,omitempty"`
	Transformation string                            `json:"transformation,omitempty"`
}

// CanaryEndBody is one end of a canary in a body.
type CanaryEndBody struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Field     string `json:"field,omitempty"`
}

// CanaryHandler serves CanaryPath.
type CanaryHandler struct {
	reg CanaryRegistrar
	h   *Handler // refusals are answered like the inventory endpoint's
}

// NewCanaryHandler returns the canary endpoint.
func NewCanaryHandler(reg CanaryRegistrar, log *slog.Logger) *CanaryHandler {
	return &CanaryHandler{reg: reg, h: NewHandler(nil, log)}
}

// Register mounts the endpoint on mux.
func (c *CanaryHandler) Register(mux *http.ServeMux) {
	mux.HandleFunc("PUT "+CanaryPath, c.put)
	mux.HandleFunc("DELETE "+CanaryPath, c.retire)
}

func (c *CanaryHandler) put(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxCanaryBodyBytes+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, ErrorAnswer{Error: "body: " + err.Error()})
		return
	}
	if int64(len(raw)) > MaxCanaryBodyBytes {
		writeJSON(w, http.StatusRequestEntityTooLarge, ErrorAnswer{Error: fmt.Sprintf("body: at most %d bytes (registry.MaxCanaryBodyBytes)", MaxCanaryBodyBytes)})
		return
	}
	var b CanaryBody
	if err := json.Unmarshal(raw, &b); err != nil {
		writeJSON(w, http.StatusBadRequest, ErrorAnswer{Error: "body: not a canary: " + err.Error()})
		return
	}
	k := Canary{Name: r.PathValue("name"), From: CanaryEnd(b.From), To: CanaryEnd(b.To), Transformation: b.Transformation}
	if b.Job != nil {
		k.JobNamespace, k.JobName = b.Job.Namespace, b.Job.Name
	}
	if _, err := c.reg.RegisterCanary(r.Context(), authz.FromContext(r.Context()), k); err != nil {
		c.h.refuse(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"canary": k.Name})
}

func (c *CanaryHandler) retire(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := c.reg.RetireCanary(r.Context(), authz.FromContext(r.Context()), name); err != nil {
		c.h.refuse(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"retired": name})
}
