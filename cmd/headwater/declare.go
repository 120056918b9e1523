package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/ingest/declare"
	"github.com/headwater-data/headwater/lineage/release"
)

// declareCmd sends declared lineage to a running headwater (docs/declared-lineage.md).
type declareCmd struct {
	Dbt declareDbtCmd `cmd:"" help:"Declare a dbt project's lineage from its target/manifest.json (at most 64 MiB); a later manifest supersedes the project's earlier declarations."`
}

type declareDbtCmd struct {
	URL              string        `help:"Headwater base URL." default:"http://127.0.0.1:8080" env:"HEADWATER_URL"`
	Token            string        `help:"API token (needs PRODUCE on the job namespace and the dataset namespace)." env:"HEADWATER_TOKEN" secret:"true"`
	Manifest         string        `help:"The manifest (- for standard input)." default:"target/manifest.json"`
	Project          string        `help:"The dbt project (default: the manifest's metadata.project_name, which it must match)."`
	JobNamespace     string        `help:"Namespace dbt-ol reports the jobs under (its OPENLINEAGE_NAMESPACE)." required:"" env:"OPENLINEAGE_NAMESPACE"`
	DatasetNamespace string        `help:"The adapter's OpenLineage dataset namespace (duckdb://<path>, postgres://host:port, ...)." required:""`
	Timeout          time.Duration `help:"Time for the whole upload." default:"5m"`
	// Pre-release impact (ADR 0056): the manifest is a candidate, compared with the current declarations, not imported.
	Impact   bool     `help:"Do not import: report the pre-release impact of this candidate manifest against the project's current declarations (needs only read access)."`
	Renamed  []string `help:"With --impact: old=new (unique ids or model names) for a model the candidate renamed (repeatable; never guessed)." sep:"none"`
	Markdown bool     `help:"With --impact: print the markdown report (for a pull-request comment) instead of JSON."`
	FailOn   []string `help:"With --impact: exit non-zero when a rule is broken: removed-column-read-within=<N>d, removed-model-read-within=<N>d (repeatable)." sep:"none"`
}

func (c declareDbtCmd) Run(rc *runCtx) error {
	in, err := openInput(c.Manifest)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read-only: nothing to lose
	doc, err := io.ReadAll(io.LimitReader(in, declare.MaxManifestBytes+1))
	if err != nil {
		return err
	}
	if int64(len(doc)) > declare.MaxManifestBytes {
		return fmt.Errorf("manifest: larger than %d bytes", declare.MaxManifestBytes)
	}
	project := c.Project
	if project == "" {
		var m struct {
			Metadata struct {
				ProjectName string `json:"project_name"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(doc, &m); err != nil || m.Metadata.ProjectName == "" {
			return fmt.Errorf("manifest: no metadata.project_name (give --project)")
		}
		project = m.Metadata.ProjectName
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	q := url.Values{"jobNamespace": {c.JobNamespace}, "datasetNamespace": {c.DatasetNamespace}}
	if c.Impact {
		return c.impact(ctx, rc, project, q, doc)
	}
	if len(c.Renamed)+len(c.FailOn) > 0 || c.Markdown {
		return fmt.Errorf("--renamed, --markdown and --fail-on need --impact")
	}
	target := strings.TrimRight(c.URL, "/") + "/api/v1/declare/dbt/" + url.PathEscape(project) + "?" + q.Encode()
	b, err := apiCall(ctx, "declare dbt", http.MethodPost, target, c.Token, gzipStream(bytes.NewReader(doc)),
		map[string]string{"Content-Encoding": "gzip"}, 16<<20)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(rc.stdout, strings.TrimSpace(string(b)))
	return err
}

// auditRecorder writes a declaration's audit record with aud (nil: nothing).
func auditRecorder(aud audit.Auditor, clock func() time.Time) declare.Recorder {
	return func(ctx context.Context, p authz.Principal, op string, allowed bool, reason string) error {
		if aud == nil {
			return nil
		}
		d := audit.DecisionDeny
		if allowed {
			d = audit.DecisionAllow
		}
		return aud.Audit(ctx, audit.AuditRecord{Time: clock().UTC(), Principal: p.Subject, PrincipalKind: p.Kind,
			Operation: op, Decision: d, Reason: reason})
	}
}

// impact uploads the candidate to the impact endpoint, prints the report (JSON, or markdown with --markdown) and
// fails when a --fail-on rule is broken (the violations are listed in the report and on standard error).
func (c declareDbtCmd) impact(ctx context.Context, rc *runCtx, project string, q url.Values, doc []byte) error {
	var rules []release.Rule
	for _, s := range c.FailOn {
		r, err := release.ParseRule(s)
		if err != nil {
			return err
		}
		rules = append(rules, r)
	}
	q["renamed"] = c.Renamed
	target := strings.TrimRight(c.URL, "/") + "/api/v1/declare/dbt/" + url.PathEscape(project) + "/impact?" + q.Encode()
	b, err := apiCall(ctx, "declare dbt --impact", http.MethodPost, target, c.Token, gzipStream(bytes.NewReader(doc)),
		map[string]string{"Content-Encoding": "gzip"}, 64<<20)
	if err != nil {
		return err
	}
	var rep api.ReleaseImpact
	if err := json.Unmarshal(b, &rep); err != nil || rep.Diff == nil {
		return fmt.Errorf("declare dbt --impact: unexpected answer: %.200s", b)
	}
	violations := release.Violations(&rep, rules)
	out := strings.TrimSpace(string(b))
	if c.Markdown {
		out = release.Markdown(&rep, violations)
	}
	if _, err := fmt.Fprintln(rc.stdout, out); err != nil {
		return err
	}
	if len(violations) > 0 {
		return fmt.Errorf("declare dbt --impact: %d rule violations:\n  %s", len(violations), strings.Join(violations, "\n  "))
	}
	return nil
}
