package registry

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authz"
	"github.com/headwater-data/headwater/authz/audit"
	"github.com/headwater-data/headwater/authz/grant"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
	"github.com/headwater-data/headwater/inventory"
)

// dump renders every stored property of a source's registration and expected jobs, sorted.
func dump(t *testing.T, g *graph.Store, source string) string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), g.Driver, `MATCH (n) WHERE (n:InventorySource AND n.key = $s)
  OR (n:ExpectedJob AND n.source = $s) RETURN properties(n) AS p ORDER BY p.key`, map[string]any{"s": source},
		neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(g.Database))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range res.Records {
		p, _ := r.Get("p")
		j, _ := json.Marshal(p)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// nsAuth allows MANAGE_INVENTORY on the namespaces listed.
type nsAuth map[string]bool

func (a nsAuth) CanOn(_ context.Context, _ authz.Principal, priv authz.Privilege, s grant.Securable) bool {
	return priv == authz.PrivManageInventory && s.Kind == grant.SecNamespace && a[s.Namespace]
}

type memAudit struct{ recs []audit.AuditRecord }

func (m *memAudit) Audit(_ context.Context, r audit.AuditRecord) error {
	m.recs = append(m.recs, r)
	return nil
}

func list(ns string, names ...string) string {
	var b strings.Builder
	b.WriteString("namespace,name,schedule\n")
	for _, n := range names {
		fmt.Fprintf(&b, "%s,%s,@daily\n", ns, n)
	}
	return b.String()
}

func TestRegisterReplacesWholeAndTwiceChangesNothing(t *testing.T) {
	g := testenv.Store(t)
	ns, src := testenv.Namespace(t), "s-"+testenv.Token(6)
	now := time.Now()
	clock := func() time.Time { now = now.Add(time.Second); return now }
	aud := &memAudit{}
	svc := NewService(NewStore(g), nil, nsAuth{ns: true}, aud, clock)
	caller := authz.Principal{Subject: "ops"}
	reg := func(body string) Result {
		t.Helper()
		res, err := svc.Register(t.Context(), caller, Request{Source: src, Kind: inventory.KindList, Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if r := reg(list(ns, "a", "b", "c")); r.Added != 3 || r.Unchanged {
		t.Fatalf("first registration: %+v", r)
	}
	before := dump(t, g, src)
	for i := range 2 {
		if r := reg(list(ns, "c", "b", "a")); !r.Unchanged || r.Added+r.Updated+r.Retired != 0 {
			t.Fatalf("re-registration %d: %+v", i, r)
		}
		if after := dump(t, g, src); after != before {
			t.Fatalf("re-registration %d changed the store:\n%s\nwas\n%s", i, after, before)
		}
	}
	if r := reg(list(ns, "a", "c")); r.Retired != 1 || r.Added != 0 {
		t.Fatalf("b removed: %+v", r)
	}
	if d := dump(t, g, src); strings.Count(d, `"retiredAt"`) != 1 || !strings.Contains(d, `"name":"b"`) {
		t.Fatalf("b must be kept, retired:\n%s", d)
	}
	if r := reg(list(ns, "a", "b", "c")); r.Added != 1 || r.Retired != 0 {
		t.Fatalf("b listed again: %+v", r)
	}
	if got := len(aud.recs); got != 5 {
		t.Fatalf("%d audit records, want one per registration (5)", got)
	}
}

func TestRegisterAndRetireNeedManageInventoryEverywhere(t *testing.T) {
	g := testenv.Store(t)
	ns, other, src := testenv.Namespace(t), testenv.Namespace(t), "s-"+testenv.Token(6)
	aud := &memAudit{}
	owner := NewService(NewStore(g), nil, nsAuth{ns: true, other: true}, aud, time.Now)
	narrow := NewService(NewStore(g), nil, nsAuth{ns: true}, aud, time.Now)
	caller := authz.Principal{Subject: "ops"}
	body := list(ns, "a") + other + ",b,@daily\n"
	if _, err := narrow.Register(t.Context(), caller, Request{Source: src, Kind: inventory.KindList, Body: strings.NewReader(body)}); err == nil ||
		!strings.Contains(err.Error(), "MANAGE_INVENTORY missing on namespace "+other) {
		t.Fatalf("registering into a namespace without the privilege: %v", err)
	}
	if _, err := owner.Register(t.Context(), caller, Request{Source: src, Kind: inventory.KindList, Body: strings.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	// replacing it with jobs only in ns would retire the job in other: refused too
	if _, err := narrow.Register(t.Context(), caller, Request{Source: src, Kind: inventory.KindList, Body: strings.NewReader(list(ns, "a"))}); err == nil {
		t.Fatal("a narrow caller retired jobs in a namespace it may not manage")
	}
	if err := narrow.Retire(t.Context(), caller, src); err == nil {
		t.Fatal("a narrow caller retired the source")
	}
	if srcs, _ := narrow.List(t.Context(), caller); containsSource(srcs, src) {
		t.Fatal("a narrow caller lists a source it may not manage")
	}
	if err := owner.Retire(t.Context(), caller, src); err != nil {
		t.Fatal(err)
	}
	if err := owner.Retire(t.Context(), caller, src); err == nil {
		t.Fatal("retiring twice: the second is refused like an unknown source")
	}
	if d := dump(t, g, src); strings.Count(d, `"retiredAt"`) != 3 {
		t.Fatalf("the source and its two jobs are retired:\n%s", d)
	}
	var denied int
	for _, r := range aud.recs {
		if r.Decision == audit.DecisionDeny {
			denied++
		}
	}
	if denied != 4 {
		t.Fatalf("%d denials audited, want 4", denied)
	}
}

func containsSource(srcs []Source, name string) bool {
	for _, s := range srcs {
		if s.Source == name {
			return true
		}
	}
	return false
}

type fakeRegistrar struct{ got []byte }

func (f *fakeRegistrar) Register(_ context.Context, _ authz.Principal, req Request) (Result, error) {
	b := new(bytes.Buffer)
	if _, err := b.ReadFrom(req.Body); err != nil {
		return Result{}, err
	}
	f.got = b.Bytes()
	return Result{Source: req.Source, Jobs: 1}, nil
}

func TestHandlerGzipLimitsAndErrors(t *testing.T) {
	fr := &fakeRegistrar{}
	mux := http.NewServeMux()
	NewHandler(fr, nil).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func(q, enc string, body []byte) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/inventory/src1"+q, bytes.NewReader(body))
		if enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b := new(bytes.Buffer)
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("namespace,name\nn,a\n"))
	_ = zw.Close()
	if code, body := post("?kind=list", "gzip", gz.Bytes()); code != 200 || string(fr.got) != "namespace,name\nn,a\n" {
		t.Fatalf("gzip: %d %s, read %q", code, body, fr.got)
	}
	if code, body := post("?kind=yaml", "", nil); code != 400 || !strings.Contains(body, "kind") {
		t.Fatalf("unknown kind: %d %s", code, body)
	}
	if code, _ := post("?kind=list", "br", []byte("x")); code != 415 {
		t.Fatalf("brotli: %d", code)
	}
	if code, _ := post("?kind=list", "gzip", []byte("not gzip")); code != 400 {
		t.Fatalf("bad gzip: %d", code)
	}
	// a gzip bomb: a small body that inflates past MaxBodyBytes
	var bomb bytes.Buffer
	zw = gzip.NewWriter(&bomb)
	chunk := make([]byte, 1<<20)
	for range MaxBodyBytes>>20 + 1 {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	if code, body := post("?kind=list", "gzip", bomb.Bytes()); code != 413 {
		t.Fatalf("gzip bomb: %d %s", code, body)
	}
}

// failReader fails the test when read: the body must not be parsed before the caller is allowed.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("the body of a refused registration was read")
	return 0, fmt.Errorf("read")
}

func TestRefusedBeforeTheBodyIsRead(t *testing.T) {
	g := testenv.Store(t)
	svc := NewService(NewStore(g), nil, nsAuth{"mine": true}, &memAudit{}, time.Now)
	_, err := svc.Register(t.Context(), authz.Principal{Subject: "x"}, Request{Source: "s-" + testenv.Token(6),
		Kind: inventory.KindDbt, JobNamespace: "theirs", Body: failReader{t}})
	if err == nil || !strings.Contains(err.Error(), "MANAGE_INVENTORY missing on namespace theirs") {
		t.Fatalf("got %v", err)
	}
}

// blockingRegistrar holds every registration until released.
type blockingRegistrar struct{ entered, release chan struct{} }

func (b blockingRegistrar) Register(context.Context, authz.Principal, Request) (Result, error) {
	b.entered <- struct{}{}
	<-b.release
	return Result{}, nil
}

func TestHandlerBoundsConcurrentRegistrations(t *testing.T) {
	b := blockingRegistrar{entered: make(chan struct{}, MaxConcurrent), release: make(chan struct{})}
	mux := http.NewServeMux()
	NewHandler(b, nil).Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	post := func() int {
		resp, err := http.Post(srv.URL+"/api/v1/inventory/s?kind=list", "text/csv", strings.NewReader("namespace,name\n"))
		if err != nil {
			t.Error(err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	done := make(chan int, MaxConcurrent)
	for range MaxConcurrent {
		go func() { done <- post() }()
		<-b.entered
	}
	if code := post(); code != http.StatusTooManyRequests {
		t.Fatalf("a registration beyond %d at once: %d, want 429", MaxConcurrent, code)
	}
	close(b.release)
	for range MaxConcurrent {
		if code := <-done; code != 200 {
			t.Fatalf("held registration: %d", code)
		}
	}
}
