// Package icebergsync is Headwater's sync from Iceberg REST catalogs: the scan that walks a catalog through the
// icebergrest client (all namespaces, every table loaded, unchanged tables skipped by ETag or metadata location,
// all-or-nothing), the dry-run report, and the sync that turns what a scan saw into DatasetEvents for the gateway
// (ADR 0041): table identity by uuid, renames and drops seen by the sync, schemas with field ids, snapshots as
// dataset versions.
package icebergsync

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/headwater-data/headwater/ingest/icebergsync/icebergrest"
	"golang.org/x/sync/errgroup"
)

// The scan's limits (ADR 0039).
const (
	// MaxNamespaces caps the namespaces one scan walks (all levels together).
	MaxNamespaces = 100_000
	// MaxNamespaceDepth caps the nesting the scan follows (a catalog that answers a namespace as its own child
	// would otherwise never end).
	MaxNamespaceDepth = 16
	// MaxTables caps the tables one scan loads (the design's 30,000 datasets, with room).
	MaxTables = 200_000
	// LoadParallel is how many loadTable requests one scan has in flight.
	LoadParallel = 4
)

// Seen is what an earlier scan saw of a table (by its name): what the next scan sends back to skip
// unchanged tables.
type Seen struct {
	ETag             string
	MetadataLocation string
}

// TableState is one table as the scan saw it. Unchanged is true when the catalog answered 304 to the ETag of
// the earlier scan, or when the metadata location is the one the earlier scan saw: nothing to write.
type TableState struct {
	Ident     icebergrest.TableIdent
	ETag      string
	Unchanged bool
	// Result is the loadTable answer; nil when the catalog answered 304.
	Result *icebergrest.LoadTableResult
}

// ScanResult is one walk of a catalog: every namespace (parents before children) and every table.
type ScanResult struct {
	Namespaces []icebergrest.Namespace
	Tables     []TableState
	// Vanished are tables listed and then gone (404) before they were loaded: dropped or renamed during the scan.
	Vanished []icebergrest.TableIdent
	// NamespaceProps are each namespace's properties, by dotted name (an `owner` there owns the tables below
	// that name none).
	NamespaceProps map[string]map[string]string
}

// Owner is a table's owner as the catalog says: its own `owner` property, else the `owner` property of its
// nearest namespace that has one ("" when none does).
func (r ScanResult) Owner(t TableState) string {
	if t.Result != nil && t.Result.Metadata.Properties["owner"] != "" {
		return t.Result.Metadata.Properties["owner"]
	}
	for ns := t.Ident.Namespace; len(ns) > 0; ns = ns[:len(ns)-1] {
		if o := r.NamespaceProps[ns.String()]["owner"]; o != "" {
			return o
		}
	}
	return ""
}

// Scan walks the catalog: namespaces level by level, each namespace's tables, then loadTable for every table,
// sending the ETag the earlier scan saw (prev, by table name; nil for a first scan). Any error ends the scan
// with no result: a partial scan must never look complete (a sync would take missing tables for dropped ones).
func Scan(ctx context.Context, c *icebergrest.Client, prev map[string]Seen) (ScanResult, error) {
	return ScanUnder(ctx, c, nil, prev)
}

// ScanUnder is Scan of the namespace root and everything below it (nil: the whole catalog).
func ScanUnder(ctx context.Context, c *icebergrest.Client, root icebergrest.Namespace, prev map[string]Seen) (ScanResult, error) {
	nss, err := walkNamespaces(ctx, c, root)
	if err != nil {
		return ScanResult{}, err
	}
	var idents []icebergrest.TableIdent
	for _, ns := range nss {
		ts, err := c.ListTables(ctx, ns)
		if err != nil {
			return ScanResult{}, err
		}
		idents = append(idents, ts...)
		if len(idents) > MaxTables {
			return ScanResult{}, fmt.Errorf("iceberg catalog: more than %d tables (rule: MaxTables)", MaxTables)
		}
	}
	props, err := loadNamespaces(ctx, c, nss)
	if err != nil {
		return ScanResult{}, err
	}
	tables, vanished, err := loadAll(ctx, c, idents, prev)
	if err != nil {
		return ScanResult{}, err
	}
	return ScanResult{Namespaces: nss, Tables: tables, Vanished: vanished, NamespaceProps: props}, nil
}

// walkNamespaces lists the namespace tree below root breadth first, root itself first (nil: the whole tree).
func walkNamespaces(ctx context.Context, c *icebergrest.Client, root icebergrest.Namespace) ([]icebergrest.Namespace, error) {
	var all []icebergrest.Namespace
	if len(root) > 0 {
		all = append(all, root)
	}
	level := []icebergrest.Namespace{root}
	for depth := 0; len(level) > 0; depth++ {
		if depth >= MaxNamespaceDepth {
			return nil, fmt.Errorf("iceberg catalog: namespaces nested deeper than %d levels (rule: MaxNamespaceDepth)", MaxNamespaceDepth)
		}
		var next []icebergrest.Namespace
		for _, parent := range level {
			children, err := c.ListNamespaces(ctx, parent)
			if err != nil {
				return nil, err
			}
			for _, ch := range children {
				if len(ch) != len(parent)+1 {
					return nil, fmt.Errorf("iceberg catalog: listNamespaces %s answered %s, not a direct child (rule: namespace-child)", parent, ch)
				}
			}
			next = append(next, children...)
		}
		all = append(all, next...)
		if len(all) > MaxNamespaces {
			return nil, fmt.Errorf("iceberg catalog: more than %d namespaces (rule: MaxNamespaces)", MaxNamespaces)
		}
		level = next
	}
	return all, nil
}

// loadNamespaces reads every namespace's properties, LoadParallel at a time.
func loadNamespaces(ctx context.Context, c *icebergrest.Client, nss []icebergrest.Namespace) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(nss))
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(LoadParallel)
	for _, ns := range nss {
		if len(ns) == 0 {
			continue
		}
		g.Go(func() error {
			p, err := c.LoadNamespace(gctx, ns)
			if err != nil {
				return err
			}
			mu.Lock()
			out[ns.String()] = p
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

// loadAll loads the tables LoadParallel at a time; the result keeps the listing's order.
func loadAll(ctx context.Context, c *icebergrest.Client, idents []icebergrest.TableIdent, prev map[string]Seen) ([]TableState, []icebergrest.TableIdent, error) {
	out := make([]TableState, len(idents))
	gone := make([]bool, len(idents))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(LoadParallel)
	var mu sync.Mutex
	for i, id := range idents {
		g.Go(func() error {
			seen := prev[id.String()]
			l, err := c.LoadTable(gctx, id, seen.ETag)
			if icebergrest.NotFound(err) {
				mu.Lock()
				gone[i] = true
				mu.Unlock()
				return nil
			}
			if err != nil {
				return err
			}
			st := TableState{Ident: id, ETag: l.ETag, Unchanged: l.NotModified, Result: l.Table}
			if l.Table != nil && seen.MetadataLocation != "" && l.Table.MetadataLocation == seen.MetadataLocation {
				st.Unchanged = true
			}
			out[i] = st
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	var tables []TableState
	var vanished []icebergrest.TableIdent
	for i := range out {
		if gone[i] {
			vanished = append(vanished, idents[i])
			continue
		}
		tables = append(tables, out[i])
	}
	sort.SliceStable(vanished, func(a, b int) bool { return vanished[a].String() < vanished[b].String() })
	return tables, vanished, nil
}

// SeenOf is what the next scan sends back for the tables of this one.
func (r ScanResult) SeenOf(prev map[string]Seen) map[string]Seen {
	out := make(map[string]Seen, len(r.Tables))
	for _, t := range r.Tables {
		s := prev[t.Ident.String()]
		if t.ETag != "" {
			s.ETag = t.ETag
		}
		if t.Result != nil {
			s.MetadataLocation = t.Result.MetadataLocation
		}
		out[t.Ident.String()] = s
	}
	return out
}
