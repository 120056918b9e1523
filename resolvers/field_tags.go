package resolvers

import (
	"context"
	"strings"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/graph"
)

// fieldTagHistory is Field.tagHistory through the request's loader: the histories of every field the request
// asks for are read together (catalog.FieldTagHistories, ADR 0088).
func (r *Resolver) fieldTagHistory(ctx context.Context, f *api.Field) (*api.TagHistory, error) {
	return r.loadersFrom(ctx).tagHistory.Load(ctx, fieldKey{f.Key, graph.Millis(f.AsOf)})
}

// fieldTags are a field's own tags: its dataset's current tags (Dataset.tags, so with the same VIEW_SENSITIVE
// filter and audit) whose entry names the field, as stored (`path:key[=value]`, ADR 0067 amendment). A
// dataset-level tag applies to every field but is the dataset's (Dataset.tags; Field.effectiveTags lists both).
func (r *Resolver) fieldTags(ctx context.Context, f *api.Field) ([]*api.Tag, error) {
	d, err := r.loadersFrom(ctx).datasets.Load(ctx, datasetKey{f.DatasetKey, f.AsOf.UnixMilli()})
	if err != nil || d == nil {
		return []*api.Tag{}, err
	}
	out := []*api.Tag{}
	for i, t := range d.Tags {
		head, _, _ := strings.Cut(t.Name, "=")
		if field, _, ok := strings.Cut(head, ":"); ok && field == f.Path {
			out = append(out, &d.Tags[i])
		}
	}
	return out, nil
}
