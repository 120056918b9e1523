package mutation

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headwater-data/headwater/api"
	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/ingest/gateway"
	"github.com/headwater-data/headwater/ingest/olevent"
)

// The permission rules and the state computation of the mutations, over in-memory fakes of the catalog, the
// policy and the gateway (the path through the real gateway, Kafka and Neo4j is e2e's
// TestGovernanceMutationsThroughTheGateway; the leak suite's cases are in resolvers).

const ns, name = "s3://lake", "crm.customers"

type fakeCatalog struct {
	row   graph.DatasetRow
	facet json.RawMessage
}

func (f fakeCatalog) FindDataset(_ context.Context, n, nm string, _ int64) (graph.DatasetRow, error) {
	if n != ns || nm != name {
		return graph.DatasetRow{}, api.NotFound("dataset %s %s not found", n, nm)
	}
	return f.row, nil
}

func (f fakeCatalog) FindField(ctx context.Context, ref api.FieldRef, t int64) (graph.FieldRow, graph.DatasetRow, error) {
	row, err := f.FindDataset(ctx, ref.Namespace, ref.Name, t)
	if err == nil && ref.Field != "email" && ref.Field != "id" {
		err = api.NotFound("field %s not found", ref.Field)
	}
	return graph.FieldRow{Path: ref.Field}, row, err
}

func (f fakeCatalog) FindJob(_ context.Context, n, nm string) (graph.JobRow, error) {
	return graph.JobRow{Namespace: n, Name: nm}, nil
}

func (f fakeCatalog) DatasetFacet(context.Context, string, string) (json.RawMessage, error) {
	return f.facet, nil
}

// fakePolicy grants the privileges listed, on every dataset; pii is sensitive.
type fakePolicy map[authz.Privilege]bool

func (p fakePolicy) Check(_ context.Context, _ authz.Principal, cs []authz.Check) ([]bool, error) {
	out := make([]bool, len(cs))
	for i, c := range cs {
		out[i] = p[c.Priv]
	}
	return out, nil
}

func (p fakePolicy) Settings() authz.Settings { return authz.Settings{SensitiveTags: []string{"pii"}} }

type fakeSubmitter struct{ sent [][]byte }

func (s *fakeSubmitter) SubmitWith(ctx context.Context, evs [][]byte, g gateway.Guard) (gateway.Submission, error) {
	s.sent = append(s.sent, evs...)
	var ev olevent.Event
	ev.Dataset = &olevent.Dataset{Namespace: ns, Name: name}
	if _, d := g.Check(ctx, authz.FromContext(ctx), &ev); d != nil {
		return gateway.Submission{Results: []gateway.Result{{Status: "rejected"}}}, nil
	}
	var sent struct{ EventID string }
	_ = json.Unmarshal(evs[0], &sent)
	return gateway.Submission{Accepted: true, Results: []gateway.Result{{Status: "accepted", EventID: sent.EventID}}}, nil
}

// facetOf decodes the one facet of a sent event.
func facetOf(t *testing.T, raw []byte, key string) string {
	t.Helper()
	var ev struct {
		Dataset struct {
			Namespace, Name string
			Facets          map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(raw, &ev); err != nil || ev.Dataset.Namespace != ns || ev.Dataset.Name != name {
		t.Fatalf("event %s", raw)
	}
	return string(ev.Dataset.Facets[key])
}

var clock = func() time.Time { return time.UnixMilli(1_000_000) }

func service(pol fakePolicy, row graph.DatasetRow, facet string) (*Service, *fakeSubmitter) {
	sub := &fakeSubmitter{}
	row.Key, row.CurrentNS, row.CurrentName, row.Namespace, row.Name = "ds1", ns, name, ns, name
	return New(fakeCatalog{row: row, facet: json.RawMessage(facet)}, sub, pol, clock), sub
}

func asAlice() context.Context {
	return authz.WithPrincipal(context.Background(), authz.Principal{Subject: "alice", Kind: "user"})
}

// is reports whether err is a domain error of class.
func is(err, class error) bool {
	de, ok := errors.AsType[*api.Error](err)
	return ok && errors.Is(de.Class, class)
}

// TestMutationPermissions: MANAGE_TAGS is required (FORBIDDEN naming the rule, nothing sent); a sensitive tag
// also needs VIEW_SENSITIVE; an unknown dataset is NOT_FOUND; with the privileges the event is sent.
func TestMutationPermissions(t *testing.T) {
	pii := []Tag{{Key: "pii", Value: "true"}}
	plain := []Tag{{Key: "finance"}}
	cases := []struct {
		name     string
		pol      fakePolicy
		run      func(*Service) error
		class    error
		contains string
	}{
		{"setTags without MANAGE_TAGS", fakePolicy{authz.PrivDescribe: true},
			func(s *Service) error { _, err := s.SetTags(asAlice(), ns, name, "", plain, ""); return err },
			api.ErrForbidden, "governance-manage-tags: MANAGE_TAGS on s3://lake crm.customers is required"},
		{"block without MANAGE_TAGS", fakePolicy{authz.PrivViewSensitive: true},
			func(s *Service) error {
				_, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, "masked")
				return err
			},
			api.ErrForbidden, "governance-manage-tags"},
		{"sensitive tag without VIEW_SENSITIVE", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error { _, err := s.SetTags(asAlice(), ns, name, "email", pii, ""); return err },
			api.ErrForbidden, "governance-view-sensitive: VIEW_SENSITIVE on s3://lake crm.customers is required"},
		{"removing a sensitive tag without VIEW_SENSITIVE", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error { _, err := s.RemoveTags(asAlice(), ns, name, "email", pii, ""); return err },
			api.ErrForbidden, "governance-view-sensitive"},
		{"unknown dataset", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error { _, err := s.SetTags(asAlice(), ns, "other", "", plain, ""); return err },
			api.ErrNotFound, "dataset: not found"},
		{"unknown field", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error { _, err := s.SetTags(asAlice(), ns, name, "nope", plain, ""); return err },
			api.ErrNotFound, "field: not found"},
		{"too many tags", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error {
				_, err := s.SetTags(asAlice(), ns, name, "", make([]Tag, MaxTagsPerCall+1), "")
				return err
			}, api.ErrBadRequest, "at most 100 per call"},
		{"reason too long", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error {
				_, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, strings.Repeat("x", MaxReasonBytes+1))
				return err
			}, api.ErrBadRequest, "reason: 1001 bytes; at most 1000"},
		{"block without a reason", fakePolicy{authz.PrivManageTags: true},
			func(s *Service) error {
				_, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "email"}, " ")
				return err
			},
			api.ErrBadRequest, "reason: a block needs a reason"},
		{"sensitive tag with both", fakePolicy{authz.PrivManageTags: true, authz.PrivViewSensitive: true},
			func(s *Service) error { _, err := s.SetTags(asAlice(), ns, name, "email", pii, ""); return err }, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, sub := service(c.pol, graph.DatasetRow{}, "")
			err := c.run(s)
			if c.class == nil {
				if err != nil || len(sub.sent) != 1 {
					t.Fatalf("err %v, sent %d", err, len(sub.sent))
				}
				return
			}
			if !is(err, c.class) || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("err %v, want %v containing %q", err, c.class, c.contains)
			}
			if len(sub.sent) != 0 {
				t.Fatalf("a refused mutation sent %d events", len(sub.sent))
			}
		})
	}
}

// TestTagListsFromTheStateInForce: setTags sends the full list in force plus the new tag (a tag of the same key
// on the same field replaced, others kept with their sources), removeTags the list without it, at an event time
// after the latest tags facet; a tag not in force is BAD_REQUEST.
func TestTagListsFromTheStateInForce(t *testing.T) {
	open := graph.OpenEnd
	row := graph.DatasetRow{TagHistory: []graph.TagInterval{
		{Name: "email:pii=false", Source: "dbt", ValidFrom: 10, ValidTo: open},
		{Name: "finance", Source: "dbt", ValidFrom: 10, ValidTo: open},
		{Name: "old", Source: "dbt", ValidFrom: 5, ValidTo: 10},
	}}
	facet := `{"tags":[{"key":"pii","value":"false","field":"email","source":"dbt"},{"key":"finance","source":"dbt"}]}`
	pol := fakePolicy{authz.PrivManageTags: true, authz.PrivViewSensitive: true}
	s, sub := service(pol, row, facet)
	if _, err := s.SetTags(asAlice(), ns, name, "email", []Tag{{Key: "pii", Value: "true"}}, "reviewed"); err != nil {
		t.Fatal(err)
	}
	got := facetOf(t, sub.sent[0], "tags")
	want := `"tags":[{"field":"email","key":"pii","source":"headwater:alice","value":"true"}` // the new one last
	if !strings.Contains(got, `{"key":"finance","source":"dbt","value":""}`) || strings.Contains(got, `"false"`) ||
		!strings.Contains(got, `{"field":"email","key":"pii","source":"headwater:alice","value":"true"}`) || strings.Contains(got, "old") {
		t.Fatalf("setTags sent %s, want finance kept, email:pii replaced (%s)", got, want)
	}
	if _, err := s.RemoveTags(asAlice(), ns, name, "", []Tag{{Key: "finance"}}, ""); err != nil {
		t.Fatal(err)
	}
	if got := facetOf(t, sub.sent[1], "tags"); got != `{"_producer":"`+Producer+`","_schemaURL":"`+tagsFacetURL+
		`","tags":[{"field":"email","key":"pii","source":"dbt","value":"false"}]}` {
		t.Fatalf("removeTags sent %s", got)
	}
	_, err := s.RemoveTags(asAlice(), ns, name, "id", []Tag{{Key: "finance"}}, "")
	if !is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), "tags[0]: no tag id:finance is in force there") {
		t.Fatalf("removing a tag not in force: %v", err)
	}
	var ev struct{ EventTime time.Time }
	_ = json.Unmarshal(sub.sent[0], &ev)
	if ev.EventTime.UnixMilli() != 1_000_000 {
		t.Fatalf("event time %v, want the clock's", ev.EventTime)
	}
	late, sub2 := service(pol, graph.DatasetRow{TagHistory: []graph.TagInterval{{Name: "x", ValidFrom: 2_000_000, ValidTo: open}}}, "")
	if _, err := late.SetTags(asAlice(), ns, name, "", []Tag{{Key: "y"}}, ""); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(sub2.sent[0], &ev)
	if ev.EventTime.UnixMilli() != 2_000_001 {
		t.Fatalf("event time %v, want just after the latest tags facet", ev.EventTime)
	}
}

// TestBlockListsFromTheStateInForce: block adds to the blocks in force (kept with their who and why), unblock
// removes the one on the target; a second block on a target, or an unblock of none, is BAD_REQUEST.
func TestBlockListsFromTheStateInForce(t *testing.T) {
	row := graph.DatasetRow{BlockHistory: []graph.BlockInterval{
		{Field: "id", By: "bob", Reason: "r1", ValidFrom: 10, ValidTo: graph.OpenEnd},
		{Field: "gone", By: "bob", Reason: "r0", ValidFrom: 1, ValidTo: 5},
	}}
	s, sub := service(fakePolicy{authz.PrivManageTags: true}, row, "")
	tgt := Target{Namespace: ns, Name: name, Field: "email"}
	if _, err := s.Block(asAlice(), tgt, "masked"); err != nil {
		t.Fatal(err)
	}
	got := facetOf(t, sub.sent[0], olevent.FacetGovernanceBlock)
	if !strings.Contains(got, `"blocks":[{"by":"bob","field":"id","reason":"r1"},{"by":"alice","field":"email","reason":"masked"}]`) {
		t.Fatalf("block sent %s", got)
	}
	if _, err := s.Block(asAlice(), Target{Namespace: ns, Name: name, Field: "id"}, "again"); !is(err, api.ErrBadRequest) {
		t.Fatalf("a second block on a target: %v", err)
	}
	if _, err := s.Unblock(asAlice(), Target{Namespace: ns, Name: name, Field: "id"}, ""); err != nil {
		t.Fatal(err)
	}
	if got := facetOf(t, sub.sent[1], olevent.FacetGovernanceBlock); !strings.Contains(got, `"blocks":[]`) {
		t.Fatalf("unblock sent %s", got)
	}
	if _, err := s.Unblock(asAlice(), tgt, ""); !is(err, api.ErrBadRequest) {
		t.Fatalf("unblock of none: %v", err)
	}
	edge := tgt
	edge.Edge = &Edge{JobNamespace: "airflow", JobName: "daily", From: api.FieldRef{Namespace: ns, Name: name, Field: "id"}}
	if _, err := s.Block(asAlice(), edge, "recomputed"); err != nil {
		t.Fatal(err)
	}
	if got := facetOf(t, sub.sent[2], olevent.FacetGovernanceBlock); !strings.Contains(got,
		`"edge":{"from":{"field":"id","name":"crm.customers","namespace":"s3://lake"},"job":{"name":"daily","namespace":"airflow"}}`) {
		t.Fatalf("edge block sent %s", got)
	}
}

// TestGuardOwnsOnlyTheCheckedDataset: the write check of a mutation's event owns the one dataset checked and
// refuses any other event.
func TestGuardOwnsOnlyTheCheckedDataset(t *testing.T) {
	g := guard{ns: ns, name: name}
	owned, d := g.Check(context.Background(), authz.Principal{}, &olevent.Event{Dataset: &olevent.Dataset{Namespace: ns, Name: name}})
	if d != nil {
		t.Fatalf("refused: %v", d)
	}
	if v, _ := owned.Header(); v == "" || !strings.Contains(v, "lake") {
		t.Fatalf("owned %q", v)
	}
	for _, ev := range []olevent.Event{
		{Dataset: &olevent.Dataset{Namespace: ns, Name: "other"}},
		{Job: &olevent.Job{Namespace: ns, Name: "j"}, Dataset: &olevent.Dataset{Namespace: ns, Name: name}},
		{},
	} {
		if _, d := g.Check(context.Background(), authz.Principal{}, &ev); d == nil {
			t.Fatalf("%+v accepted", ev)
		}
	}
}

// TestTagNamesReadBack: a tag in force that the latest facet does not list is read back from its name.
func TestTagNamesReadBack(t *testing.T) {
	for n, want := range map[string]olevent.Tag{
		"pii":               {Key: "pii"},
		"pii=true":          {Key: "pii", Value: "true"},
		"email:pii=true":    {Field: "email", Key: "pii", Value: "true"},
		"k=a:b":             {Key: "k", Value: "a:b"},
		"a.b:pii.email=yes": {Field: "a.b", Key: "pii.email", Value: "yes"},
	} {
		if got := parseTagName(n); got != want {
			t.Errorf("%s: %+v, want %+v", n, got, want)
		}
		if tagName(want) != n {
			t.Errorf("%+v renders %s", want, tagName(want))
		}
	}
}
