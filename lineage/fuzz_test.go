package lineage

import (
	"errors"
	"testing"

	"github.com/headwater-data/headwater/api"
)

// FuzzLineageArguments feeds the lineage query's arguments as a GraphQL caller may send them (any depth, node
// budget, direction and granularity strings, any start shape, any `after` cursor) through the service's argument
// check and cursor reading: no panic; a refusal is always api.BadRequest; an accepted set is within the budgets
// (depth at least 1, the node budget in [2, MaxNodesCap]) with its defaults filled; a cursor that this server did
// not sign for this principal and these arguments is never accepted.
func FuzzLineageArguments(f *testing.F) {
	f.Add(3, 0, "DOWNSTREAM", "DATASET", uint8(0), "s3://b", "k/x", "")
	f.Add(0, -1, "", "FIELD", uint8(2), "", "", "e30.AAAA")
	f.Add(20, 5000, "BOTH", "", uint8(7), "postgres://h:5432", "db.s.t", "eyJ2IjoxfQ.c2ln")
	s := &Service{cfg: Config{}.WithDefaults(), cursor: cursorCodec{key: []byte("fuzz-key-0123456789abcdef012345")}}
	f.Fuzz(func(t *testing.T, depth, maxNodes int, dir, gran string, shape uint8, ns, name, after string) {
		a := LineageArgs{Depth: depth, MaxNodes: maxNodes, Direction: api.Direction(dir), Granularity: api.Granularity(gran), After: after}
		if shape&1 != 0 {
			a.Start.Dataset = &api.DatasetRef{Namespace: ns, Name: name}
		}
		if shape&2 != 0 {
			a.Start.Field = &api.FieldRef{Namespace: ns, Name: name, Field: name}
		}
		if shape&4 != 0 {
			a.Start.Job = &api.JobRef{Namespace: ns, Name: name}
		}
		got, err := s.check(a)
		if err != nil {
			if e, ok := errors.AsType[*api.Error](err); !ok || !errors.Is(err, api.ErrBadRequest) || e.Message == "" {
				t.Fatalf("refusal %v (%T) is not a BAD_REQUEST naming the argument", err, err)
			}
			return
		}
		if got.Depth < 1 || got.MaxNodes < 2 || got.MaxNodes > max(s.cfg.MaxNodesCap, 2) || got.Direction == "" || got.Granularity == "" {
			t.Fatalf("accepted arguments outside the budgets or without defaults: %+v", got)
		}
		if after == "" {
			return
		}
		if _, err := s.cursor.decode(after, digest("fuzzer"), digestArgs(got)); err == nil {
			t.Fatalf("accepted a cursor it never issued: %q", after)
		}
	})
}
