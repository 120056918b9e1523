package resolvers

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/inventory/registry"
	"github.com/headwater-data/headwater/resolvers/model"
	"github.com/headwater-data/headwater/trust"
)

// errNoTrust answers the coverage and inventory operations on a server wired without them.
var errNoTrust = fmt.Errorf("%w: the trust signals are not enabled", trust.ErrUnavailable)

// coverageTrendDefault is how far back a figure's trend goes when `since` is not given.
const coverageTrendDefault = 7 * 24 * time.Hour

// coverage starts the caller's report (figures are computed when their fields are selected).
func (r *Resolver) coverage(ctx context.Context, namespace, criticality, producer, window *string) (*trust.Report, error) {
	if r.trust == nil {
		return nil, errNoTrust
	}
	q := trust.Query{Namespace: deref(namespace), Criticality: strings.ToLower(deref(criticality)), Producer: deref(producer)}
	if window != nil {
		d, err := trust.ParseWindow(*window)
		if err != nil {
			return nil, err
		}
		q.Window = d
	}
	return r.trust.Report(ctx, authz.FromContext(ctx), q)
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// figureLabel is the sentence people read for a figure.
func figureLabel(f *trust.Figure) string {
	n, d := f.Numerator, f.Denominator
	switch f.Signal {
	case trust.SignalJobsReporting:
		return fmt.Sprintf("%d of %d expected jobs reporting", n, d)
	case trust.SignalJobsInstrumented:
		return fmt.Sprintf("%d of %d expected jobs instrumented", n, d)
	case trust.SignalRunsWithoutTerminal:
		return fmt.Sprintf("%d of %d runs without a terminal event", n, d)
	case trust.SignalQuietProducers:
		return fmt.Sprintf("%d of %d producers quiet", n, d)
	case trust.SignalRejectedEvents:
		return fmt.Sprintf("%d of %d events rejected", n, d)
	case trust.SignalUnresolvedIdentities:
		return fmt.Sprintf("%d unresolved identities", n)
	case trust.SignalEdgeFreshness:
		return fmt.Sprintf("%d of %d edges fresh", n, d)
	case trust.SignalColumnLineage:
		return fmt.Sprintf("%d of %d datasets with column lineage", n, d)
	case trust.SignalReportedWrites:
		return fmt.Sprintf("%d of %d catalog commits reported by a run", n, d)
	}
	return fmt.Sprintf("%d of %d", n, d)
}

// coverageItems pages a figure's items with an offset cursor (the items are the caller's own view).
func coverageItems(f *trust.Figure, first *int, after *string) (*model.CoverageItemConnection, error) {
	n := 20
	if first != nil {
		n = *first
	}
	if n < 1 || n > trust.MaxItemsPage {
		return nil, fmt.Errorf("%w: first: must be 1..%d, got %d", model.ErrInvalidInput, trust.MaxItemsPage, n)
	}
	from, err := itemOffset(after)
	if err != nil {
		return nil, err
	}
	out := &model.CoverageItemConnection{TotalCount: len(f.Items) + f.Omitted, Nodes: []*model.CoverageItem{}}
	end := min(from+n, len(f.Items))
	for _, it := range f.Items[min(from, end):end] {
		out.Nodes = append(out.Nodes, coverageItem(it))
	}
	if end < len(f.Items) {
		c := base64.RawURLEncoding.EncodeToString([]byte("ci:" + strconv.Itoa(end)))
		out.EndCursor, out.HasNextPage = &c, true
	}
	return out, nil
}

func itemOffset(after *string) (int, error) {
	if after == nil {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(*after)
	v, ok := strings.CutPrefix(string(b), "ci:")
	n, perr := strconv.Atoi(v)
	if err != nil || !ok || perr != nil || n < 0 {
		return 0, fmt.Errorf("%w: after: not a cursor of these items", model.ErrInvalidInput)
	}
	return n, nil
}

func coverageItem(it trust.Item) *model.CoverageItem {
	out := &model.CoverageItem{Kind: model.CoverageItemKind(it.Kind), Nodes: []string{}, Message: it.Message,
		Namespace: strOrNil(it.Namespace), Name: strOrNil(it.Name), Criticality: strOrNil(it.Criticality),
		Status: strOrNil(it.Status), Source: strOrNil(it.Source), Producer: strOrNil(it.Producer),
		Reason: strOrNil(it.Reason)}
	if it.RunKey != "" {
		out.Nodes = append(out.Nodes, api.RunID(it.RunKey))
	}
	for _, k := range it.DatasetKeys {
		out.Nodes = append(out.Nodes, api.DatasetID(k))
	}
	for _, k := range it.JobKeys {
		out.Nodes = append(out.Nodes, api.JobID(k))
	}
	if it.Count > 0 {
		c := int(it.Count)
		out.Count = &c
	}
	if !it.Since.IsZero() {
		s := it.Since
		out.Since = &s
	}
	return out
}

func coveragePoints(pts []trust.Point) []*model.CoveragePoint {
	out := make([]*model.CoveragePoint, len(pts))
	for i, p := range pts {
		out[i] = &model.CoveragePoint{At: p.At, Numerator: p.Numerator, Denominator: p.Denominator}
		if p.Denominator > 0 {
			r := float64(p.Numerator) / float64(p.Denominator)
			out[i].Ratio = &r
		}
	}
	return out
}

func inventorySources(srcs []registry.Source) []*model.InventorySource {
	out := make([]*model.InventorySource, len(srcs))
	for i, s := range srcs {
		out[i] = &model.InventorySource{Source: s.Source, Kind: string(s.Kind), Jobs: s.Jobs,
			Namespaces: append([]string{}, s.Namespaces...), RegisteredAt: s.RegisteredAt, RegisteredBy: s.RegisteredBy,
			Digest: s.Digest}
		if !s.RetiredAt.IsZero() {
			t := s.RetiredAt
			out[i].RetiredAt = &t
		}
	}
	return out
}
