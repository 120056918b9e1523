// Package inventory is the model of the expected-job inventory: the jobs a scheduler or a list says should be
// reporting, independently of the events (the denominator of coverage, docs/trust.md). It is pure: the readers
// (dbtmanifest, airflowdags, joblist) turn a source's own files into an Inventory, package registry stores it in
// Neo4j, package trust computes the signals against it.
//
// Invariants: an Inventory is the whole of one source (registering it replaces the source's previous inventory;
// a job that is no longer listed is retired, not missing); its jobs are sorted by key and its Digest depends only
// on its content, so registering the same inventory twice changes nothing. Matching an expected job to the jobs
// events report is by explicit names (MatchNames) and an explicit dbt unique id, never fuzzy.
package inventory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind is the format a source's inventory is read from.
type Kind string

// Source kinds.
const (
	KindDbt     Kind = "dbt"     // a dbt target/manifest.json
	KindAirflow Kind = "airflow" // airflow dags list -o json + tasks list, or the REST API's JSON
	KindList    Kind = "list"    // a plain JSON or CSV list
)

// ParseKind returns the kind named s.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindDbt, KindAirflow, KindList:
		return k, nil
	}
	return "", fmt.Errorf("kind: must be one of dbt, airflow, list, got %q", s)
}

// Criticality values are free text chosen by the source (lower-cased); Unspecified is the value of an entry
// that names none.
const Unspecified = "unspecified"

// Limits on one inventory (named here so every reader and the endpoint share them).
const (
	// MaxJobs is the largest number of expected jobs one source may register.
	MaxJobs = 100_000
	// MaxNameLen bounds a source name, a namespace, a job name, an owner and a criticality.
	MaxNameLen = 1024
	// MaxMatchNames bounds the names one expected job matches.
	MaxMatchNames = 8
	// MaxOutputs bounds the expected outputs of one expected job.
	MaxOutputs = 256
)

// Dataset is an expected output, as the source names it (canonicalised by the registry).
type Dataset struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Job is one expected job.
type Job struct {
	// Namespace and Name are the job identity Headwater shows and checks permissions on.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Type says what the source calls it (dbt model, snapshot, test; airflow task; list).
	Type string `json:"type"`
	// MatchNames are the job names (in Namespace) events may report this job under, per the source's rule
	// (empty: Name only).
	MatchNames []string `json:"matchNames"`
	// DbtUniqueID is the dbt node's unique_id (dbt only).
	DbtUniqueID string `json:"dbtUniqueId,omitempty"`
	// DbtMatches are the (unique_id, role) pairs, "<unique_id>|<role>", of the dbt node jobs this job is
	// reported as (ADR 0027: a job carrying dbtUniqueId and dbtRole NODE or TESTS).
	DbtMatches  []string `json:"dbtMatches,omitempty"`
	Criticality string   `json:"criticality"`
	Owner       string   `json:"owner,omitempty"`
	// Schedule is the source's schedule text ("" when none is known); Interval its longest gap between two
	// scheduled runs (0: no schedule known, never counted missing).
	Schedule string        `json:"schedule,omitempty"`
	Interval time.Duration `json:"interval,omitempty"`
	// Paused jobs (an Airflow DAG that is paused) are expected not to run: never counted missing.
	Paused  bool      `json:"paused,omitempty"`
	Outputs []Dataset `json:"outputs,omitempty"`
}

// Key is the job's identity within its source.
func (j Job) Key() string { return j.Namespace + "\x1f" + j.Name }

// Inventory is the whole inventory of one source.
type Inventory struct {
	Source string `json:"source"`
	Kind   Kind   `json:"kind"`
	Jobs   []Job  `json:"jobs"`
}

var sourceName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`)

// ValidateSource checks a source name: letters, digits, '.', '_', ':' and '-', at most MaxNameLen.
func ValidateSource(s string) error {
	if len(s) > MaxNameLen || !sourceName.MatchString(s) {
		return fmt.Errorf("source: must match %s and be at most %d bytes, got %q", sourceName, MaxNameLen, s)
	}
	return nil
}

// Normalize sorts the jobs and their lists, fills defaults and checks every limit; it refuses two jobs with
// one identity. The error names the job and the rule.
func (inv *Inventory) Normalize() error {
	if err := ValidateSource(inv.Source); err != nil {
		return err
	}
	if len(inv.Jobs) > MaxJobs {
		return fmt.Errorf("jobs: at most %d expected jobs per source, got %d", MaxJobs, len(inv.Jobs))
	}
	for i := range inv.Jobs {
		if err := inv.Jobs[i].normalize(); err != nil {
			return fmt.Errorf("jobs[%d] (%s): %w", i, inv.Jobs[i].Name, err)
		}
	}
	slices.SortFunc(inv.Jobs, func(a, b Job) int { return strings.Compare(a.Key(), b.Key()) })
	for i := 1; i < len(inv.Jobs); i++ {
		if inv.Jobs[i].Key() == inv.Jobs[i-1].Key() {
			return fmt.Errorf("jobs: %s/%s is listed twice", inv.Jobs[i].Namespace, inv.Jobs[i].Name)
		}
	}
	return nil
}

func (j *Job) normalize() error {
	j.Criticality = strings.ToLower(strings.TrimSpace(j.Criticality))
	if j.Criticality == "" {
		j.Criticality = Unspecified
	}
	for _, f := range []struct{ name, v string }{{"namespace", j.Namespace}, {"name", j.Name},
		{"owner", j.Owner}, {"criticality", j.Criticality}, {"schedule", j.Schedule}} {
		if len(f.v) > MaxNameLen {
			return fmt.Errorf("%s: at most %d bytes", f.name, MaxNameLen)
		}
	}
	if j.Namespace == "" || j.Name == "" {
		return fmt.Errorf("namespace, name: required")
	}
	if len(j.MatchNames) == 0 {
		j.MatchNames = []string{j.Name}
	}
	slices.Sort(j.MatchNames)
	j.MatchNames = slices.Compact(j.MatchNames)
	slices.Sort(j.DbtMatches)
	j.DbtMatches = slices.Compact(j.DbtMatches)
	if len(j.MatchNames) > MaxMatchNames || len(j.DbtMatches) > MaxMatchNames {
		return fmt.Errorf("matchNames, dbtMatches: at most %d each", MaxMatchNames)
	}
	if len(j.Outputs) > MaxOutputs {
		return fmt.Errorf("outputs: at most %d", MaxOutputs)
	}
	slices.SortFunc(j.Outputs, func(a, b Dataset) int {
		return strings.Compare(a.Namespace+"\x1f"+a.Name, b.Namespace+"\x1f"+b.Name)
	})
	j.Outputs = slices.Compact(j.Outputs)
	return nil
}

// Digest is a hash of the inventory's content (after Normalize): equal digests mean nothing to change.
func (inv *Inventory) Digest() string {
	b, _ := json.Marshal(inv) // plain structs: cannot fail
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Namespaces are the distinct job namespaces of the inventory, sorted.
func (inv *Inventory) Namespaces() []string {
	var out []string
	for _, j := range inv.Jobs {
		out = append(out, j.Namespace)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
