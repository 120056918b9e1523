package apitoken

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/headwater-data/headwater/authn"
	"github.com/headwater-data/headwater/graph"
	"github.com/headwater-data/headwater/internal/testenv"
)

const testTokenCacheTTL = time.Second

// newCachedTokenStore is a token store with a TTL cache whose Neo4j sessions are counted.
func newCachedTokenStore(t *testing.T) (*Store, *testClock, string, *testenv.CountingDriver) {
	t.Helper()
	plain, clk, owner := newTokenStore(t)
	cd := &testenv.CountingDriver{DriverWithContext: plain.store.Driver}
	counted := *plain.store
	counted.Driver = cd
	return NewStore(&counted, clk.Now).WithCache(testTokenCacheTTL), clk, owner, cd
}

// setBehindTheStore changes a token node directly in Neo4j, as another replica or the CLI would.
func setBehindTheStore(t *testing.T, s *graph.Store, id, prop string, v any) {
	t.Helper()
	_, err := neo4j.ExecuteQuery(t.Context(), s.Driver, "MATCH (t:ApiToken {id: $id}) SET t["+strconv.Quote(prop)+"] = $v",
		map[string]any{"id": id, "v": v}, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.Database))
	if err != nil {
		t.Fatal(err)
	}
}

func TestTokenCacheHitReadsNoNeo4jUntilTTL(t *testing.T) {
	ts, clk, owner, cd := newCachedTokenStore(t)
	ctx := t.Context()
	tok, info, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindService})
	if err != nil {
		t.Fatal(err)
	}
	cd.Reads()
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if n := cd.Reads(); n != 1 {
		t.Fatalf("first verify: %d neo4j reads, want 1", n)
	}
	for range 3 {
		got, err := ts.Verify(ctx, tok)
		if err != nil || got.Owner != owner || got.ID != info.ID {
			t.Fatalf("cached verify: %+v %v", got, err)
		}
	}
	wrong := tok[:len(tok)-1] + flip(tok[len(tok)-1])
	if _, err := ts.Verify(ctx, wrong); !errors.Is(err, authn.ErrInvalid) {
		t.Errorf("wrong secret against the cached record: %v, want authn.ErrInvalid", err)
	}
	if n := cd.Reads(); n != 0 {
		t.Fatalf("cached verifies: %d neo4j reads, want 0", n)
	}

	// Revoked behind the store's back (another replica): the cached record answers until the TTL ends.
	setBehindTheStore(t, ts.store, info.ID, "revokedAt", graph.Millis(clk.Now()))
	cd.Reads()
	clk.Add(testTokenCacheTTL - time.Millisecond)
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatalf("within the TTL the cached record stands: %v", err)
	}
	if n := cd.Reads(); n != 0 {
		t.Fatalf("within the TTL: %d neo4j reads, want 0", n)
	}
	clk.Add(time.Millisecond)
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Fatalf("after the TTL the revocation applies: %v, want authn.ErrInvalid", err)
	}
	if n := cd.Reads(); n != 1 {
		t.Fatalf("after the TTL: %d neo4j reads, want 1", n)
	}
}

func TestTokenCacheRevokeThroughStoreIsImmediate(t *testing.T) {
	ts, clk, owner, cd := newCachedTokenStore(t)
	ctx := t.Context()
	tok, info, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindUser})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if ts.cache.len() != 1 {
		t.Fatalf("cached records: %d, want 1", ts.cache.len())
	}
	if err := ts.Revoke(ctx, info.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Fatalf("verify right after revoke through the store: %v, want authn.ErrInvalid", err)
	}
	// The revoked record is cached now, and stays refused from the cache.
	cd.Reads()
	clk.Add(testTokenCacheTTL / 2)
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Fatalf("revoked token from the cache: %v", err)
	}
	if n := cd.Reads(); n != 0 {
		t.Fatalf("revoked record from the cache: %d reads, want 0", n)
	}
}

func TestTokenCacheEnforcesExpiryFromCachedRecord(t *testing.T) {
	ts, clk, owner, cd := newCachedTokenStore(t)
	ctx := t.Context()
	tok, _, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindService, ExpiresAt: clk.Now().Add(testTokenCacheTTL / 2)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	cd.Reads()
	clk.Add(testTokenCacheTTL / 2) // expired, the cached record still live
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Fatalf("at expiry, from the cache: %v, want authn.ErrInvalid", err)
	}
	if n := cd.Reads(); n != 0 {
		t.Fatalf("expiry must be decided from the cached record: %d reads, want 0", n)
	}
}

// An unknown id is read from Neo4j once per TTL, not once per request (issue 13 item 17); a token that appears
// under that id on another replica verifies at most a TTL later, and at once when this store creates it.
func TestTokenCacheRemembersUnknownIDsForTheTTL(t *testing.T) {
	ts, clk, owner, cd := newCachedTokenStore(t)
	ctx := t.Context()
	tok, info, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindService})
	if err != nil {
		t.Fatal(err)
	}
	// The id verified before its node exists (created on another replica meanwhile).
	setBehindTheStore(t, ts.store, info.ID, "id", info.ID+"-hidden")
	cd.Reads()
	for range 5 {
		if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
			t.Fatalf("unknown id: %v, want authn.ErrInvalid", err)
		}
	}
	if n := cd.Reads(); n != 1 {
		t.Fatalf("unknown id within the TTL: %d reads, want 1", n)
	}
	setBehindTheStore(t, ts.store, info.ID+"-hidden", "id", info.ID)
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Fatalf("within the TTL the negative entry stands: %v", err)
	}
	clk.Add(testTokenCacheTTL)
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatalf("a token appearing after a miss verifies after the TTL: %v", err)
	}
	// A negative entry is dropped when this store creates (or revokes) the id: Create forgets the id it writes.
	setBehindTheStore(t, ts.store, info.ID, "id", info.ID+"-hidden")
	ts.cache.drop(info.ID)
	if _, err := ts.Verify(ctx, tok); !errors.Is(err, authn.ErrInvalid) {
		t.Fatal("hidden token verified")
	}
	setBehindTheStore(t, ts.store, info.ID+"-hidden", "id", info.ID)
	ts.forget(info.ID)
	if _, err := ts.Verify(ctx, tok); err != nil {
		t.Fatalf("after forget (what Create does for its id) the token verifies at once: %v", err)
	}
}

// A race: a read that found nothing must not be remembered as unknown when the id was created meanwhile.
func TestTokenCacheUnknownEntryRacingACreateIsNotKept(t *testing.T) {
	ts, _, _, _ := newCachedTokenStore(t)
	known, gen := ts.cache.known("0123456789abcdef")
	if !known {
		t.Fatal("fresh cache knows no unknown ids")
	}
	ts.forget("0123456789abcdef") // Create of that id, between the read and putUnknown
	ts.cache.putUnknown("0123456789abcdef", gen)
	if known, _ := ts.cache.known("0123456789abcdef"); !known {
		t.Fatal("a negative entry read before a create was kept after it")
	}
}

func TestTokenCacheDisabledReadsEveryTime(t *testing.T) {
	ts, _, owner, cd := newCachedTokenStore(t)
	ts.WithCache(0)
	ctx := t.Context()
	tok, _, err := ts.Create(ctx, NewToken{Owner: owner, Kind: authn.KindService})
	if err != nil {
		t.Fatal(err)
	}
	cd.Reads()
	for range 3 {
		if _, err := ts.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := cd.Reads(); n != 3 {
		t.Fatalf("without a cache: %d reads, want 3", n)
	}
}

func TestTokenCacheBoundsAndRaces(t *testing.T) {
	clk := &testClock{now: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)}
	c := newTokenCache(time.Second, clk.Now)
	for i := range maxTokenCacheEntries + 50 {
		_, _, gen := c.get("x")
		c.put(strconv.Itoa(i), authn.TokenInfo{ID: strconv.Itoa(i)}, "h", gen)
	}
	if n := c.len(); n > maxTokenCacheEntries {
		t.Fatalf("cache holds %d records, bound %d", n, maxTokenCacheEntries)
	}
	if _, ok, _ := c.get(strconv.Itoa(maxTokenCacheEntries + 49)); !ok {
		t.Error("the newest record must be kept")
	}
	clk.Add(time.Second)
	if _, ok, _ := c.get(strconv.Itoa(maxTokenCacheEntries + 49)); ok {
		t.Error("a record at its TTL must be read again")
	}
	// A read that started before a revocation must not be cached after it.
	_, _, gen := c.get("raced")
	c.drop("raced")
	c.put("raced", authn.TokenInfo{ID: "raced"}, "h", gen)
	if _, ok, _ := c.get("raced"); ok {
		t.Error("a record read before a drop was cached after it")
	}
}
