package catalog

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/governance"
	"github.com/headwater-data/headwater/graph"
)

// NodeKey names a node the lineage walk reached: its kind (dataset, field or job) and its key.
type NodeKey struct {
	Kind authz.NodeKind
	Key  string
}

// Nodes materialises the nodes a walk found, in the order given (one read per kind present), as named at t. The walk
// has checked them already; datasets are presented to the caller (sensitive tags, audit) like every lookup's.
func (s *Catalog) Nodes(ctx context.Context, keys []NodeKey, t int64) ([]api.Node, error) {
	byKind := map[authz.NodeKind][]string{}
	for _, k := range keys {
		byKind[k.Kind] = append(byKind[k.Kind], k.Key)
	}
	ds, fs, js := map[string]graph.DatasetRow{}, map[string]graph.FieldRow{}, map[string]graph.JobRow{}
	var err error
	if k := byKind[authz.KindDataset]; len(k) > 0 {
		if ds, err = s.store.DatasetsByKeys(ctx, k, t); err != nil {
			return nil, err
		}
	}
	if k := byKind[authz.KindField]; len(k) > 0 {
		if fs, err = s.store.FieldsByKeys(ctx, k); err != nil {
			return nil, err
		}
	}
	if k := byKind[authz.KindJob]; len(k) > 0 {
		if js, err = s.store.JobsByKeys(ctx, k); err != nil {
			return nil, err
		}
	}
	asOf := graph.FromMillis(t)
	out := make([]api.Node, 0, len(keys))
	var shown []*api.Dataset
	for _, r := range keys {
		if d, ok := ds[r.Key]; ok && r.Kind == authz.KindDataset {
			shown = append(shown, datasetOf(d, asOf))
			out = append(out, shown[len(shown)-1])
		} else if f, ok := fs[r.Key]; ok && r.Kind == authz.KindField {
			out = append(out, fieldOf(f, asOf))
		} else if j, ok := js[r.Key]; ok && r.Kind == authz.KindJob {
			out = append(out, jobOf(j, asOf))
		}
	}
	return out, s.present(ctx, shown)
}

func datasetOf(r graph.DatasetRow, asOf time.Time) *api.Dataset {
	d := &api.Dataset{ID: api.DatasetID(r.Key), Key: r.Key, Namespace: r.Namespace, Name: r.Name, Environment: strOrNil(r.Env),
		CurrentNamespace: r.CurrentNS, CurrentName: r.CurrentName, Description: strOrNil(r.Description),
		CreatedAt: timeOrNil(r.CreatedAt), DroppedAt: timeOrNil(r.DroppedAt), Owners: ownersOf(r.Owners),
		Tags: tagsOf(r), AsOf: asOf}
	return d
}

func ownersOf(raw string) []api.Owner {
	out := []api.Owner{}
	if raw == "" {
		return out
	}
	var list []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(raw), &list) != nil {
		return out
	}
	for _, o := range list {
		out = append(out, api.Owner{Name: o.Name, Type: strOrNil(o.Type)})
	}
	return out
}

// tagsOf are a dataset's current tags, each with its source and since when it is in force where the graph keeps
// tag histories (projection version 6).
func tagsOf(r graph.DatasetRow) []api.Tag {
	out := make([]api.Tag, len(r.Tags))
	for i, t := range r.Tags {
		out[i] = api.Tag{Name: t}
		if iv, ok := r.TagAt(t, graph.OpenEnd-1); ok {
			out[i].Source, out[i].ValidFrom = strOrNil(iv.Source), timeOrNil(iv.ValidFrom)
		}
	}
	return out
}

func aliasOf(b graph.NameBinding) *api.Alias {
	return &api.Alias{Namespace: b.Namespace, Name: b.Name, Environment: strOrNil(b.Env), Kind: api.NameKind(b.Kind),
		ValidFrom: timeOrNil(b.ValidFrom), ValidTo: timeOrNil(b.ValidTo)}
}

func fieldOf(r graph.FieldRow, asOf time.Time) *api.Field {
	return &api.Field{ID: api.FieldID(r.Key), Key: r.Key, DatasetKey: r.DatasetKey, Path: r.PathAt(graph.Millis(asOf)), Type: strOrNil(r.Type),
		Description: strOrNil(r.Description), ValidFrom: graph.FromMillis(r.ValidFrom), ValidTo: timeOrNil(r.ValidTo),
		ObservedOnRead: r.ObservedOnRead, Tags: []api.Tag{}, AsOf: asOf}
}

func jobOf(r graph.JobRow, asOf time.Time) *api.Job {
	j := &api.Job{ID: api.JobID(r.Key), Key: r.Key, Namespace: r.Namespace, Name: r.Name,
		ProcessingType: strOrNil(r.ProcessingType), JobType: strOrNil(r.JobType), Integration: strOrNil(r.Integration),
		Description: strOrNil(r.Description), FirstSeenAt: timeOrNil(r.FirstSeenAt), LastSeenAt: timeOrNil(r.LastSeenAt),
		DbtUniqueID: strOrNil(r.DbtUniqueID), Names: r.Names, TagNames: r.TagsAt(graph.Millis(asOf)), AsOf: asOf}
	for _, iv := range r.TagHistory {
		key, value, _ := strings.Cut(iv.Name, "=") // a job tag names no field (ADR 0090)
		j.TagIntervals = append(j.TagIntervals, &api.TagInterval{Name: iv.Name, Class: governance.CanonicalClass(key), Value: strOrNil(value),
			Source: strOrNil(iv.Source), ValidFrom: graph.FromMillis(iv.ValidFrom), ValidTo: timeOrNil(iv.ValidTo),
			EventID: strOrNil(iv.EventID), By: strOrNil(iv.By)})
	}
	if r.DbtRole != "" {
		role := api.DbtRole(r.DbtRole)
		j.DbtRole = &role
	}
	if len(j.Names) == 0 {
		j.Names = []string{r.Name}
	}
	return j
}

func jobVersionOf(r graph.JobVersionRow) *api.JobVersion {
	return &api.JobVersion{ID: api.VersionID(r.Key), Key: r.Key, JobKey: r.JobKey, DefinitionHash: r.DefinitionHash,
		SQL: strOrNil(r.SQL), SourceCodeLocation: strOrNil(r.SourceCodeLocation),
		ValidFrom: timeOrNil(r.ValidFrom), ValidTo: timeOrNil(r.ValidTo)}
}

func runOf(r graph.RunRow) *api.Run {
	cs := make([]api.RunState, len(r.ConflictingStates))
	for i, c := range r.ConflictingStates {
		cs[i] = api.RunState(c)
	}
	parent, root := r.ParentKey, r.RootKey
	if parent == "" { // written before projection version 2: the parent's key was its runId
		parent = r.ParentRunID
	}
	if root == "" {
		root = r.RootRunID
	}
	return &api.Run{ID: api.RunID(r.Key), Key: r.Key, RunID: r.RunID, JobKey: r.JobKey, JobVersionKey: r.JobVersionKey,
		State: api.RunState(r.State), ConflictingStates: cs, StartedAt: timeOrNil(r.StartedAt), EndedAt: timeOrNil(r.EndedAt),
		ErrorMessage: strOrNil(r.ErrorMessage), ParentRunID: r.ParentRunID, RootRunID: r.RootRunID,
		ParentKey: parent, RootKey: root, RunIDConflict: r.RunIDConflict}
}

func runIOOf(r graph.RunIORow) *api.RunIO {
	role, pub := api.IORole(r.Rel), api.Publication(r.Publication)
	if pub == "" {
		pub = api.Publication(graph.PubPublished)
	}
	observed := r.LastAt
	if observed == 0 {
		observed = r.FirstAt
	}
	io := &api.RunIO{Role: role, DatasetKey: r.DatasetKey, Version: strOrNil(r.DatasetVersion), Publication: pub,
		FirstObservedAt: timeOrNil(r.FirstAt), ObservedAt: graph.FromMillis(observed)}
	if r.ScanSnapshotID != "" {
		io.Scan = &api.RunIOScan{SnapshotID: r.ScanSnapshotID, Match: api.ScanMatch(r.ScanMatch),
			ReportedVersion: strOrNil(r.ReportedVersion)}
	}
	return io
}

func eventOf(r graph.EventRow) *api.RunEventSummary {
	return &api.RunEventSummary{EventID: r.ID, EventType: strOrNil(r.EventType), EventTime: graph.FromMillis(r.EventTime),
		ReceivedAt: timeOrNil(r.ReceivedAt), Producer: strOrNil(r.Producer)}
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// timeOrNil converts stored millis; 0 and OpenEnd become nil.
func timeOrNil(ms int64) *time.Time {
	if ms == 0 || ms >= graph.OpenEnd {
		return nil
	}
	t := graph.FromMillis(ms)
	return &t
}

// summaryEntries renders an Iceberg snapshot summary (a JSON object of strings) as entries sorted by key; a
// summary that does not decode gives none.
func summaryEntries(raw string) []*api.VersionSummaryEntry {
	out := []*api.VersionSummaryEntry{}
	var m map[string]string
	if raw == "" || json.Unmarshal([]byte(raw), &m) != nil {
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, &api.VersionSummaryEntry{Key: k, Value: m[k]})
	}
	return out
}
