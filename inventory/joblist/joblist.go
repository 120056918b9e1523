// Package joblist reads a plain list of expected jobs, as JSON or CSV, into the inventory model. Columns (CSV
// header, or JSON object keys): namespace, name (required), criticality, schedule, owner, outputs. In CSV,
// outputs is a space-separated list of `namespace|name` (or `namespace,name` inside JSON strings is not
// accepted: use the JSON form [{"namespace": .., "name": ..}]). The job matches reported jobs of exactly that
// namespace and name. The package is pure.
package joblist

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/headwater-data/headwater/inventory"
)

// Entry is one JSON entry.
type Entry struct {
	Namespace   string              `json:"namespace"`
	Name        string              `json:"name"`
	Criticality string              `json:"criticality"`
	Schedule    string              `json:"schedule"`
	Owner       string              `json:"owner"`
	Outputs     []inventory.Dataset `json:"outputs"`
}

// Read decodes a JSON array of entries (or {"jobs": [...]}) or, when the first byte is not '[' or '{', a CSV
// with a header row.
func Read(r io.Reader) ([]inventory.Job, error) {
	br := bufio.NewReader(r)
	first, err := firstByte(br)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	if first == '[' || first == '{' {
		entries, err = readJSON(br, first)
	} else {
		entries, err = readCSV(br)
	}
	if err != nil {
		return nil, err
	}
	out := make([]inventory.Job, 0, len(entries))
	for i, e := range entries {
		j, err := e.job()
		if err != nil {
			return nil, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		out = append(out, j)
	}
	return out, nil
}

func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0, errors.New("list: empty document")
		}
		if b != ' ' && b != '\n' && b != '\r' && b != '\t' && b != 0xEF && b != 0xBB && b != 0xBF {
			return b, br.UnreadByte()
		}
	}
}

func readJSON(r io.Reader, first byte) ([]Entry, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if first == '[' {
		var list []Entry
		if err := dec.Decode(&list); err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		return list, nil
	}
	var doc struct {
		Jobs []Entry `json:"jobs"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	return doc.Jobs, nil
}

var csvColumns = []string{"namespace", "name", "criticality", "schedule", "owner", "outputs"}

func readCSV(r io.Reader) ([]Entry, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("list: csv header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !contains(csvColumns, h) {
			return nil, fmt.Errorf("list: csv header: unknown column %q (known: %s)", h, strings.Join(csvColumns, ", "))
		}
		col[h] = i
	}
	var out []Entry
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list: csv line %d: %w", line, err)
		}
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		e := Entry{Namespace: get("namespace"), Name: get("name"), Criticality: get("criticality"),
			Schedule: get("schedule"), Owner: get("owner")}
		for o := range strings.FieldsSeq(get("outputs")) {
			ns, name, ok := strings.Cut(o, "|")
			if !ok || ns == "" || name == "" {
				return nil, fmt.Errorf("list: csv line %d: outputs: %q is not namespace|name", line, o)
			}
			e.Outputs = append(e.Outputs, inventory.Dataset{Namespace: ns, Name: name})
		}
		out = append(out, e)
	}
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

func (e Entry) job() (inventory.Job, error) {
	if e.Namespace == "" || e.Name == "" {
		return inventory.Job{}, errors.New("namespace, name: required")
	}
	d, err := inventory.ParseSchedule(e.Schedule)
	if err != nil {
		return inventory.Job{}, err
	}
	return inventory.Job{Namespace: e.Namespace, Name: e.Name, Type: "list", Criticality: e.Criticality,
		Owner: e.Owner, Schedule: e.Schedule, Interval: d, Outputs: e.Outputs}, nil
}
