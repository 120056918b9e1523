package graph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// ReadRecords runs one read query on a reader and returns its records as maps.
func (s *Store) ReadRecords(ctx context.Context, cypher string, params map[string]any) ([]map[string]any, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.Database), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("neo4j read: %w", err)
	}
	out := make([]map[string]any, len(res.Records))
	for i, r := range res.Records {
		out[i] = r.AsMap()
	}
	return out, nil
}

// WriteRecords runs one write query on the leader (an auto-commit transaction, retried by the driver on
// transient errors) and returns its records as maps.
func (s *Store) WriteRecords(ctx context.Context, cypher string, params map[string]any) ([]map[string]any, error) {
	res, err := neo4j.ExecuteQuery(ctx, s.Driver, cypher, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithDatabase(s.Database), neo4j.ExecuteQueryWithWritersRouting())
	if err != nil {
		return nil, fmt.Errorf("neo4j write: %w", err)
	}
	out := make([]map[string]any, len(res.Records))
	for i, r := range res.Records {
		out[i] = r.AsMap()
	}
	return out, nil
}

// Props is a property map read from Neo4j with typed accessors that tolerate missing values.
type Props map[string]any

// PropsOf converts a value returned by a query (map or nil) to Props.
func PropsOf(v any) Props {
	switch m := v.(type) {
	case map[string]any:
		return Props(m)
	case neo4j.Node:
		return Props(m.Props)
	case neo4j.Relationship:
		return Props(m.Props)
	}
	return nil
}

// Str returns a string property or "".
func (p Props) Str(k string) string {
	s, _ := p[k].(string)
	return s
}

// Int returns an integer property or 0.
func (p Props) Int(k string) int64 {
	n, _ := p[k].(int64)
	return n
}

// Bool returns a boolean property or false.
func (p Props) Bool(k string) bool {
	b, _ := p[k].(bool)
	return b
}

// Has reports whether the property is set (not null).
func (p Props) Has(k string) bool { return p[k] != nil }

// Strs returns a list-of-strings property.
func (p Props) Strs(k string) []string {
	l, _ := p[k].([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// Ints returns a list-of-integers property.
func (p Props) Ints(k string) []int64 {
	l, _ := p[k].([]any)
	out := make([]int64, 0, len(l))
	for _, v := range l {
		n, _ := v.(int64)
		out = append(out, n)
	}
	return out
}

// Bools returns a list-of-booleans property.
func (p Props) Bools(k string) []bool {
	l, _ := p[k].([]any)
	out := make([]bool, 0, len(l))
	for _, v := range l {
		b, _ := v.(bool)
		out = append(out, b)
	}
	return out
}

// Sub returns a nested map property.
func (p Props) Sub(k string) Props { return PropsOf(p[k]) }

// List returns a list of maps property.
func (p Props) List(k string) []Props {
	l, _ := p[k].([]any)
	out := make([]Props, 0, len(l))
	for _, v := range l {
		if m := PropsOf(v); m != nil {
			out = append(out, m)
		}
	}
	return out
}
