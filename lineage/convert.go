package lineage

import (
	"context"
	"encoding/json"
	"time"

	"github.com/headwater-data/headwater/graph"
)

// materialise loads the page's new nodes (one read per kind) in the order they were found.
func (s *Service) materialise(ctx context.Context, refs []nodeRef, t int64) ([]Node, error) {
	byKind := map[HopKind][]string{}
	for _, r := range refs {
		byKind[r.kind] = append(byKind[r.kind], r.key)
	}
	ds, err := s.store.DatasetsByKeys(ctx, byKind[HopDataset], t)
	if err != nil {
		return nil, err
	}
	fs, err := s.store.FieldsByKeys(ctx, byKind[HopField])
	if err != nil {
		return nil, err
	}
	js, err := s.store.JobsByKeys(ctx, byKind[HopJob])
	if err != nil {
		return nil, err
	}
	asOf := graph.FromMillis(t)
	out := make([]Node, 0, len(refs))
	var shown []*Dataset
	for _, r := range refs {
		if d, ok := ds[r.key]; ok && r.kind == HopDataset {
			shown = append(shown, datasetOf(d, asOf))
			out = append(out, shown[len(shown)-1])
		} else if f, ok := fs[r.key]; ok && r.kind == HopField {
			out = append(out, fieldOf(f, asOf))
		} else if j, ok := js[r.key]; ok && r.kind == HopJob {
			out = append(out, jobOf(j, asOf))
		}
	}
	return out, s.present(ctx, shown)
}

func datasetOf(r graph.DatasetRow, asOf time.Time) *Dataset {
	d := &Dataset{ID: DatasetID(r.Key), Key: r.Key, Namespace: r.Namespace, Name: r.Name, Environment: strOrNil(r.Env),
		CurrentNamespace: r.CurrentNS, CurrentName: r.CurrentName, Description: strOrNil(r.Description),
		CreatedAt: timeOrNil(r.CreatedAt), DroppedAt: timeOrNil(r.DroppedAt), Owners: ownersOf(r.Owners),
		Tags: tagsOf(r.Tags), AsOf: asOf}
	return d
}

func ownersOf(raw string) []Owner {
	out := []Owner{}
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
		out = append(out, Owner{Name: o.Name, Type: strOrNil(o.Type)})
	}
	return out
}

func tagsOf(tags []string) []Tag {
	out := make([]Tag, len(tags))
	for i, t := range tags {
		out[i] = Tag{Name: t}
	}
	return out
}

func aliasOf(b graph.NameBinding) *Alias {
	return &Alias{Namespace: b.Namespace, Name: b.Name, Environment: strOrNil(b.Env), Kind: NameKind(b.Kind),
		ValidFrom: timeOrNil(b.ValidFrom), ValidTo: timeOrNil(b.ValidTo)}
}

func fieldOf(r graph.FieldRow, asOf time.Time) *Field {
	return &Field{ID: FieldID(r.Key), Key: r.Key, DatasetKey: r.DatasetKey, Path: r.Path, Type: strOrNil(r.Type),
		Description: strOrNil(r.Description), ValidFrom: graph.FromMillis(r.ValidFrom), ValidTo: timeOrNil(r.ValidTo),
		ObservedOnRead: r.ObservedOnRead, Tags: []Tag{}, AsOf: asOf}
}

func jobOf(r graph.JobRow, asOf time.Time) *Job {
	j := &Job{ID: JobID(r.Key), Key: r.Key, Namespace: r.Namespace, Name: r.Name,
		ProcessingType: strOrNil(r.ProcessingType), JobType: strOrNil(r.JobType), Integration: strOrNil(r.Integration),
		Description: strOrNil(r.Description), FirstSeenAt: timeOrNil(r.FirstSeenAt), LastSeenAt: timeOrNil(r.LastSeenAt),
		DbtUniqueID: strOrNil(r.DbtUniqueID), Names: r.Names, AsOf: asOf}
	if r.DbtRole != "" {
		role := DbtRole(r.DbtRole)
		j.DbtRole = &role
	}
	if len(j.Names) == 0 {
		j.Names = []string{r.Name}
	}
	return j
}

func jobVersionOf(r graph.JobVersionRow) *JobVersion {
	return &JobVersion{ID: encodeID(idVersion, r.Key), Key: r.Key, JobKey: r.JobKey, DefinitionHash: r.DefinitionHash,
		SQL: strOrNil(r.SQL), SourceCodeLocation: strOrNil(r.SourceCodeLocation),
		ValidFrom: timeOrNil(r.ValidFrom), ValidTo: timeOrNil(r.ValidTo)}
}

func runOf(r graph.RunRow) *Run {
	cs := make([]RunState, len(r.ConflictingStates))
	for i, c := range r.ConflictingStates {
		cs[i] = RunState(c)
	}
	parent, root := r.ParentKey, r.RootKey
	if parent == "" { // written before projection version 2: the parent's key was its runId
		parent = r.ParentRunID
	}
	if root == "" {
		root = r.RootRunID
	}
	return &Run{ID: RunID(r.Key), Key: r.Key, RunID: r.RunID, JobKey: r.JobKey, JobVersionKey: r.JobVersionKey,
		State: RunState(r.State), ConflictingStates: cs, StartedAt: timeOrNil(r.StartedAt), EndedAt: timeOrNil(r.EndedAt),
		ErrorMessage: strOrNil(r.ErrorMessage), ParentRunID: r.ParentRunID, RootRunID: r.RootRunID,
		ParentKey: parent, RootKey: root, RunIDConflict: r.RunIDConflict}
}

func runIOOf(r graph.RunIORow) *RunIO {
	role, pub := IORole(r.Rel), Publication(r.Publication)
	if pub == "" {
		pub = Publication(graph.PubPublished)
	}
	observed := r.LastAt
	if observed == 0 {
		observed = r.FirstAt
	}
	return &RunIO{Role: role, DatasetKey: r.DatasetKey, Version: strOrNil(r.DatasetVersion), Publication: pub,
		FirstObservedAt: timeOrNil(r.FirstAt), ObservedAt: graph.FromMillis(observed)}
}

func eventOf(r graph.EventRow) *RunEventSummary {
	return &RunEventSummary{EventID: r.ID, EventType: strOrNil(r.EventType), EventTime: graph.FromMillis(r.EventTime),
		ReceivedAt: timeOrNil(r.ReceivedAt), Producer: strOrNil(r.Producer)}
}
