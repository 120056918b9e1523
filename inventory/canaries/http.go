package canaries

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/inventory/manage"
)

// Path is the canary endpoint: PUT registers (or replaces) the canary {name} with a JSON body
// {"from": {namespace, name, field}, "to": {...}, "job": {namespace, name}, "transformation": "DIRECT"};
// DELETE retires it. The same permission and audit as the GraphQL operations.
const Path = "/api/v1/canaries/{name}"

// MaxBodyBytes bounds one canary registration body.
const MaxBodyBytes int64 = 16 << 10

// Registrar is what the canary endpoint calls (Service).
type Registrar interface {
	Register(ctx context.Context, caller authz.Principal, c Canary) (Canary, error)
	Retire(ctx context.Context, caller authz.Principal, name string) error
}

var _ Registrar = (*Service)(nil)

// Body is the JSON body of a canary registration.
type Body struct {
	From           EndBody                           `json:"from"`
	To             EndBody                           `json:"to"`
	Job            *struct{ Namespace, Name string } `json:"job,omitempty"`
	Transformation string                            `json:"transformation,omitempty"`
}

// EndBody is one end of a canary in a body.
type EndBody struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Field     string `json:"field,omitempty"`
}

// Handler serves Path.
type Handler struct {
	reg Registrar
	log *slog.Logger // refusals are answered like the inventory endpoint's (manage.Refuse)
}

// NewHandler returns the canary endpoint.
func NewHandler(reg Registrar, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{reg: reg, log: log}
}

// Register mounts the endpoint on mux.
func (c *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("PUT "+Path, c.put)
	mux.HandleFunc("DELETE "+Path, c.retire)
}

func (c *Handler) put(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		manage.WriteJSON(w, http.StatusBadRequest, manage.ErrorAnswer{Error: "body: " + err.Error()})
		return
	}
	if int64(len(raw)) > MaxBodyBytes {
		manage.WriteJSON(w, http.StatusRequestEntityTooLarge, manage.ErrorAnswer{Error: fmt.Sprintf("body: at most %d bytes (canaries.MaxBodyBytes)", MaxBodyBytes)})
		return
	}
	var b Body
	if err := json.Unmarshal(raw, &b); err != nil {
		manage.WriteJSON(w, http.StatusBadRequest, manage.ErrorAnswer{Error: "body: not a canary: " + err.Error()})
		return
	}
	k := Canary{Name: r.PathValue("name"), From: End(b.From), To: End(b.To), Transformation: b.Transformation}
	if b.Job != nil {
		k.JobNamespace, k.JobName = b.Job.Namespace, b.Job.Name
	}
	if _, err := c.reg.Register(r.Context(), authz.FromContext(r.Context()), k); err != nil {
		manage.Refuse(w, c.log, err)
		return
	}
	manage.WriteJSON(w, http.StatusOK, map[string]string{"canary": k.Name})
}

func (c *Handler) retire(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := c.reg.Retire(r.Context(), authz.FromContext(r.Context()), name); err != nil {
		manage.Refuse(w, c.log, err)
		return
	}
	manage.WriteJSON(w, http.StatusOK, map[string]string{"retired": name})
}
