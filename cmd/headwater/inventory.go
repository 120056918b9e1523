package main

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/headwater-data/headwater/inventory"
)

// inventoryCmd registers expected-job inventories with a running headwater (docs/trust.md).
type inventoryCmd struct {
	Register inventoryRegisterCmd `cmd:"" help:"Upload a source's inventory (dbt manifest, Airflow listing, JSON or CSV list; at most 64 MiB); it replaces the source's previous one."`
}

type inventoryRegisterCmd struct {
	URL              string        `help:"Headwater base URL." default:"http://127.0.0.1:8080" env:"HEADWATER_URL"`
	Token            string        `help:"API token (needs MANAGE_INVENTORY on the inventory's namespaces)." env:"HEADWATER_TOKEN" secret:"true"`
	Source           string        `help:"Source name (the registration it replaces)." required:""`
	Kind             string        `help:"Format of the file." required:"" enum:"dbt,airflow,list"`
	File             string        `help:"The file to upload (- for standard input): target/manifest.json, the Airflow listing document, a JSON or CSV list." required:""`
	JobNamespace     string        `help:"Namespace the jobs report under (dbt-ol's OPENLINEAGE_NAMESPACE, Airflow's AIRFLOW__OPENLINEAGE__NAMESPACE)."`
	DatasetNamespace string        `help:"The dbt adapter's OpenLineage dataset namespace (duckdb://<path>, postgres://host:port, ...)."`
	Schedule         string        `help:"Schedule of dbt nodes whose meta names none (cron, @daily, 6h)."`
	ScheduleDag      string        `help:"dag_id of the Airflow DAG that runs the dbt project: without --schedule, its schedule as its Airflow registration lists it applies to dbt nodes whose meta names none."`
	Timeout          time.Duration `help:"Time for the whole upload." default:"5m"`
}

func (c inventoryRegisterCmd) Run(rc *runCtx) error {
	if _, err := inventory.ParseKind(c.Kind); err != nil {
		return err
	}
	in, err := openInput(c.File)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read-only: nothing to lose
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	body, err := c.post(ctx, gzipStream(in))
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(rc.stdout, strings.TrimSpace(body))
	return err
}

func openInput(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}

// gzipStream compresses r while it is uploaded (the file is never held in memory).
func gzipStream(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		zw := gzip.NewWriter(pw)
		_, err := io.Copy(zw, r)
		pw.CloseWithError(errors.Join(err, zw.Close()))
	}()
	return pr
}

func (c inventoryRegisterCmd) post(ctx context.Context, body io.Reader) (string, error) {
	q := url.Values{"kind": {c.Kind}}
	for k, v := range map[string]string{"jobNamespace": c.JobNamespace, "datasetNamespace": c.DatasetNamespace, "schedule": c.Schedule, "scheduleDag": c.ScheduleDag} {
		if v != "" {
			q.Set(k, v)
		}
	}
	target := strings.TrimRight(c.URL, "/") + "/api/v1/inventory/" + url.PathEscape(c.Source) + "?" + q.Encode()
	b, err := apiCall(ctx, "inventory register", http.MethodPost, target, c.Token, body,
		map[string]string{"Content-Encoding": "gzip"}, 1<<20)
	return string(b), err
}
