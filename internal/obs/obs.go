// Package obs holds Headwater's operability plumbing: the slog logger, the Prometheus registry, the metrics
// listener and the health/readiness handlers. Nothing here knows about lineage.
package obs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// LogConfig selects the log format and level.
type LogConfig struct {
	Level  string `help:"Log level: debug, info, warn, error." default:"info" enum:"debug,info,warn,error" env:"HEADWATER_LOG_LEVEL" yaml:"level"`
	Format string `help:"Log format: json or text." default:"json" enum:"json,text" env:"HEADWATER_LOG_FORMAT" yaml:"format"`
}

// NewLogger builds the process logger.
func NewLogger(c LogConfig, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: lvl}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// NewRegistry returns a registry with the Go and process collectors; pass it (as prometheus.Registerer) to every
// component instead of using the global default registry.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// MetricsHandler serves the registry.
func MetricsHandler(r *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(r, promhttp.HandlerOpts{Registry: r})
}

// Check is one readiness dependency. An Optional one (the Redis cache: without it answers are slower, never wrong
// or failed; an Iceberg catalog the scheduled sync cannot reach: its view goes stale) is reported as degraded
// while it fails and does not make the process unready.
type Check struct {
	Name     string
	Fn       func(ctx context.Context) error
	Optional bool
}

// ReadinessTimeout bounds each dependency check.
const ReadinessTimeout = 2 * time.Second

// Healthz answers 200 while the process runs.
func Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
}

// Readyz runs every check in parallel with ReadinessTimeout and answers 200 only if every required one passes.
// The body names each dependency and its state, never internal error text beyond a short reason, and lists the
// failing optional ones under "degraded" (sorted; empty when none).
func Readyz(checks []Check, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res := RunChecks(r.Context(), checks)
		ok, degraded := true, []string{}
		for _, c := range checks {
			switch {
			case res[c.Name] == "ok":
			case c.Optional:
				degraded = append(degraded, c.Name)
			default:
				ok = false
			}
		}
		slices.Sort(degraded)
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			log.Warn("not ready", "checks", res)
			w.WriteHeader(http.StatusServiceUnavailable)
		} else if len(degraded) > 0 {
			log.Warn("ready, degraded", "checks", res)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ready": ok, "degraded": degraded, "checks": res})
	})
}

// RunChecks runs the checks concurrently and returns name -> "ok" or a short failure reason.
func RunChecks(ctx context.Context, checks []Check) map[string]string {
	out := make(map[string]string, len(checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, ReadinessTimeout)
			defer cancel()
			state := "ok"
			if err := c.Fn(cctx); err != nil {
				state = "unavailable"
				if errors.Is(err, context.DeadlineExceeded) {
					state = "timeout"
				}
			}
			mu.Lock()
			out[c.Name] = state
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// RedactedValue hides values of settings whose names look secret.
func RedactedValue(name string, v any) any {
	n := strings.ToLower(name)
	for _, s := range []string{"password", "secret", "token", "key"} {
		if strings.Contains(n, s) {
			if fmt.Sprint(v) == "" {
				return ""
			}
			return "[redacted]"
		}
	}
	return v
}

// Register registers c with reg and returns it, or the identical collector already registered there (one
// process may build several handlers over one registry). A nil reg leaves c unregistered.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}
