package resolvers

import (
	"context"
	"time"

	"github.com/vikstrous/dataloadgen"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/catalog"
)

// loaderWait is how long a loader collects keys before one batched read.
const loaderWait = 2 * time.Millisecond

// datasetKey is a dataset named as at an instant.
type datasetKey struct {
	key  string
	asOf int64
}

// fieldKey is a field asked as at an instant.
type fieldKey struct {
	key  string
	asOf int64
}

// loaders batch the node lookups of one request (runs' jobs, edges' jobs, run I/O datasets, fields' datasets,
// fields' and jobs' tag histories).
type loaders struct {
	datasets    *dataloadgen.Loader[datasetKey, *api.Dataset]
	tagHistory  *dataloadgen.Loader[fieldKey, *api.TagHistory]
	jobTags     *dataloadgen.Loader[*api.Job, *api.TagHistory] // Job.tagHistory (ADR 0090)
	jobs        *dataloadgen.Loader[string, *api.Job]
	runs        *dataloadgen.Loader[string, *api.Run]
	jobVersions *dataloadgen.Loader[string, *api.JobVersion]
	catalog     *catalog.Catalog
}

type loadersKey struct{}

func newLoaders(cat *catalog.Catalog) *loaders {
	opt := dataloadgen.WithWait(loaderWait)
	return &loaders{
		datasets:    dataloadgen.NewMappedLoader(datasetBatch(cat), opt),
		tagHistory:  dataloadgen.NewMappedLoader(tagHistoryBatch(cat), opt),
		jobTags:     dataloadgen.NewMappedLoader(cat.JobTagHistories, opt),
		jobs:        dataloadgen.NewMappedLoader(cat.JobsByKeys, opt),
		runs:        dataloadgen.NewMappedLoader(cat.RunsByKeys, opt),
		jobVersions: dataloadgen.NewMappedLoader(cat.JobVersionsByKeys, opt),
		catalog:     cat,
	}
}

// datasetBatch groups keys by instant: one read per distinct asOf (usually one).
func datasetBatch(cat *catalog.Catalog) func(context.Context, []datasetKey) (map[datasetKey]*api.Dataset, error) {
	return func(ctx context.Context, keys []datasetKey) (map[datasetKey]*api.Dataset, error) {
		byAsOf := map[int64][]string{}
		for _, k := range keys {
			byAsOf[k.asOf] = append(byAsOf[k.asOf], k.key)
		}
		out := make(map[datasetKey]*api.Dataset, len(keys))
		for t, ks := range byAsOf {
			ds, err := cat.DatasetsByKeys(ctx, ks, time.UnixMilli(t).UTC())
			if err != nil {
				return nil, err
			}
			for k, d := range ds {
				out[datasetKey{k, t}] = d
			}
		}
		return out, nil
	}
}

// tagHistoryBatch groups fields by instant: one catalog.FieldTagHistories per distinct asOf (usually one).
func tagHistoryBatch(cat *catalog.Catalog) func(context.Context, []fieldKey) (map[fieldKey]*api.TagHistory, error) {
	return func(ctx context.Context, keys []fieldKey) (map[fieldKey]*api.TagHistory, error) {
		byAsOf := map[int64][]string{}
		for _, k := range keys {
			byAsOf[k.asOf] = append(byAsOf[k.asOf], k.key)
		}
		out := make(map[fieldKey]*api.TagHistory, len(keys))
		for t, ks := range byAsOf {
			hs, err := cat.FieldTagHistories(ctx, ks, t)
			if err != nil {
				return nil, err
			}
			for k, h := range hs {
				out[fieldKey{k, t}] = h
			}
		}
		return out, nil
	}
}

// withLoaders returns the request's context with its loaders.
func withLoaders(ctx context.Context, l *loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// loadersFrom returns the request's loaders; a context without them (a resolver called outside the handler)
// gets fresh ones.
func (r *Resolver) loadersFrom(ctx context.Context) *loaders {
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok {
		return l
	}
	return newLoaders(r.catalog)
}

// optional turns a loader's "not found" into nil: a dangling reference is not an error of the answer.
func optional[T any](v *T, err error) (*T, error) {
	if err != nil && isNotFound(err) {
		return nil, nil
	}
	return v, err
}
