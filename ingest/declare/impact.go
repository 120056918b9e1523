package declare

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/internal/httpbody"
	"github.com/headwater-data/headwater/internal/ttlcache"
	"github.com/headwater-data/headwater/inventory/dbtmanifest"
)

// PathDbtImpact is the pre-release impact endpoint (POST, the candidate manifest as the body, the declaration's
// query parameters plus renamed=old=new, repeatable, and format=markdown for the rendered report).
const PathDbtImpact = "/api/v1/declare/dbt/{project}/impact"

// Bounds of the kept candidates (ADR 0056).
const (
	// CandidateTTL is how long an uploaded candidate can be answered by releaseImpact(candidate:).
	CandidateTTL = time.Hour
	// MaxCandidates bounds the candidates one process keeps (the oldest make room).
	MaxCandidates = 256
	// MaxRenamed bounds the renamed parameters of one request.
	MaxRenamed = 1000
)

// Assess answers the impact of a diff for the caller in ctx (lineage/release.Assessor, wired by cmd/headwater):
// owners are the candidate's meta.owner by relation, exposures its exposures by consumer dataset name.
type Assess func(ctx context.Context, project, datasetNS string, diff *api.ReleaseDiff, owners map[string]string,
	exposures map[string]api.AffectedExposure) (*api.ReleaseImpact, error)

// Agree compares the candidate's declarations with the runs' observations for the caller in ctx
// (lineage/agreement.Checker, wired by cmd/headwater; ADR 0069).
type Agree func(ctx context.Context, jobNS string, nodes []DeclaredNode) (*api.DeclaredVersusObserved, error)

// Markdown renders a report (lineage/release.Markdown, wired by cmd/headwater).
type Markdown func(r *api.ReleaseImpact) string

// candidate is an uploaded candidate manifest as kept: only what the diff needs, bound to its uploader.
type candidate struct {
	subject, project, jobNS, dsNS string
	nodes                         []DeclaredNode
	exposures                     map[string]api.AffectedExposure
	renamed                       map[string]string
	expires                       time.Time
}

// ImpactService computes pre-release impacts: the candidate against the project's current declarations (read
// from the graph as the caller may see them), then the impact of the diff as the caller may see it.
type ImpactService struct {
	rr     RecordReader
	vis    Visibility
	assess Assess
	agree  Agree
	md     Markdown
	cands  *ttlcache.Cache[*candidate]
	clock  func() time.Time
	log    *slog.Logger
	slots  chan struct{}
}

// NewImpactService returns the service; agree may be nil (the report's declaredVersusObserved is then empty).
func NewImpactService(rr RecordReader, vis Visibility, assess Assess, agree Agree, md Markdown, clock func() time.Time, log *slog.Logger) *ImpactService {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &ImpactService{rr: rr, vis: vis, assess: assess, agree: agree, md: md, cands: ttlcache.New[*candidate](CandidateTTL, MaxCandidates, clock),
		clock: clock, log: log, slots: make(chan struct{}, MaxConcurrent)}
}

// Register mounts the endpoint on mux.
func (s *ImpactService) Register(mux *http.ServeMux) { mux.Handle("POST "+PathDbtImpact, s) }

// ReleaseImpact answers a kept candidate for the caller (the GraphQL query releaseImpact): against the current
// declarations and lineage now. A candidate another principal uploaded, or one expired, is NOT_FOUND.
func (s *ImpactService) ReleaseImpact(ctx context.Context, id string) (*api.ReleaseImpact, error) {
	c, ok, _ := s.cands.Get(id)
	if !ok || c.subject != authz.FromContext(ctx).Subject {
		return nil, api.NotFound("candidate %q: no such candidate (they are kept %s after the upload, for the principal that uploaded them)", id, CandidateTTL)
	}
	return s.report(ctx, id, c)
}

func (s *ImpactService) report(ctx context.Context, id string, c *candidate) (*api.ReleaseImpact, error) {
	cur, err := ReadCurrent(ctx, s.rr, s.vis, c.jobNS, s.clock())
	if err != nil {
		return nil, err
	}
	diff, err := Diff(cur.Nodes, c.nodes, c.renamed)
	if err != nil {
		return nil, api.BadRequest("%s", err)
	}
	owners := map[string]string{}
	for _, n := range c.nodes {
		if n.Owner != "" {
			owners[n.Dataset] = n.Owner
		}
	}
	r, err := s.assess(ctx, c.project, c.dsNS, diff, owners, c.exposures)
	if err != nil {
		return nil, err
	}
	r.DeclaredVersusObserved = &api.DeclaredVersusObserved{DeclaredNotObserved: []*api.EdgeDisagreement{},
		ObservedNotDeclared: []*api.EdgeDisagreement{}, TestsNotObserved: []*api.TestDisagreement{}}
	if s.agree != nil {
		if r.DeclaredVersusObserved, err = s.agree(ctx, c.jobNS, c.nodes); err != nil {
			return nil, err
		}
	}
	r.Candidate, r.ExpiresAt = id, c.expires
	if !cur.At.IsZero() {
		r.CurrentDeclaredAt = &cur.At
	}
	return r, nil
}

func (s *ImpactService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		httpbody.LeaveUnread(w)
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusTooManyRequests, Answer{Error: fmt.Sprintf("busy: at most %d impact requests at once", MaxConcurrent)})
		return
	}
	project := r.PathValue("project")
	body, status, err := openBody(w, r)
	var rep *api.ReleaseImpact
	if err == nil {
		rep, status, err = s.upload(r.Context(), project, r.URL.Query(), body)
	}
	if err != nil {
		if status == http.StatusOK {
			status = statusOf(err)
		}
		if status == http.StatusInternalServerError {
			s.log.Error("pre-release impact failed", "project", project, "err", err)
		}
		writeJSON(w, status, Answer{Project: project, Error: err.Error()})
		return
	}
	if r.URL.Query().Get("format") == "markdown" {
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = io.WriteString(w, s.md(rep))
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// upload reads a candidate, keeps it and answers its report.
func (s *ImpactService) upload(ctx context.Context, project string, q map[string][]string, body io.Reader) (*api.ReleaseImpact, int, error) {
	m, err := dbtmanifest.Read(body)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, http.StatusRequestEntityTooLarge, errTooLarge
		}
		return nil, http.StatusBadRequest, err
	}
	if m.ProjectName != project {
		return nil, http.StatusBadRequest, fmt.Errorf("project: the path names %q but metadata.project_name is %q", project, m.ProjectName)
	}
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	c := &candidate{subject: authz.FromContext(ctx).Subject, project: project, jobNS: get("jobNamespace"), dsNS: get("datasetNamespace")}
	switch {
	case c.jobNS == "":
		return nil, http.StatusBadRequest, fmt.Errorf("jobNamespace: required (dbt-ol's OPENLINEAGE_NAMESPACE)")
	case c.dsNS == "":
		return nil, http.StatusBadRequest, fmt.Errorf("datasetNamespace: required (the adapter's OpenLineage namespace, e.g. duckdb://<path>)")
	case len(q["renamed"]) > MaxRenamed:
		return nil, http.StatusBadRequest, fmt.Errorf("renamed: at most %d pairs", MaxRenamed)
	}
	if c.renamed, err = ParseRenamed(project, q["renamed"]); err != nil {
		return nil, http.StatusBadRequest, err
	}
	if c.nodes, err = FromManifest(m); err != nil {
		return nil, http.StatusBadRequest, err
	}
	c.exposures = ExposuresOf(m)
	id, err := newCandidateID()
	if err != nil {
		return nil, http.StatusInternalServerError, err
	}
	c.expires = s.clock().Add(CandidateTTL).UTC()
	rep, err := s.report(ctx, id, c)
	if err != nil {
		return nil, http.StatusOK, err
	}
	_, _, gen := s.cands.Get(id)
	s.cands.Put(id, c, gen)
	return rep, http.StatusOK, nil
}

func newCandidateID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "cand_" + hex.EncodeToString(b), nil
}

// statusOf is the HTTP status of a service error (the query API's classes).
func statusOf(err error) int {
	switch {
	case errors.Is(err, api.ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, api.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, api.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, api.ErrUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
