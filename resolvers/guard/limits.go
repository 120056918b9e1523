package guard

import (
	"fmt"
	"time"
)

// Limits of the GraphQL endpoint that are not configurable.
const (
	// MaxComplexity bounds an operation's complexity (gqlgen's default: one per field).
	MaxComplexity = 2000
	// MaxQueryDepth bounds the nesting of an operation's selections (introspection excluded).
	MaxQueryDepth = 12
	// maxCachedDocumentBytes is the longest document the parsed-query and APQ caches keep: a longer one is parsed
	// and validated on every request (its cost is bounded by the body and token limits) and never held.
	maxCachedDocumentBytes = 16 << 10
	// docBytesPerQueryByte estimates a parsed, validated document's heap per byte of query text (measured: 12 for
	// the introspection query, 21 for repeated fields, 29 for a 91-byte query; 32 plus a fixed overhead is an
	// upper bound for documents within the limits).
	docBytesPerQueryByte = 32
	// cacheEntryOverhead is the fixed heap of one cache entry (list element, map slot, AST roots).
	cacheEntryOverhead = 1024
)

// Defaults of the configurable limits (Limits); every refusal answers BAD_REQUEST before the work it bounds.
const (
	// DefaultMaxBodyBytes bounds a POST body and a GET query string (413 / 414 above it).
	DefaultMaxBodyBytes = 256 << 10
	// DefaultMaxTokens bounds the lexical tokens of a document (the parser stops at the limit).
	DefaultMaxTokens = 10000
	// DefaultMaxFragments bounds the fragment definitions of a document.
	DefaultMaxFragments = 100
	// DefaultMaxSpreads bounds the fragment spreads written in a document.
	DefaultMaxSpreads = 500
	// DefaultMaxFields bounds the field selections of a document with every fragment spread expanded (each
	// operation and each fragment definition counted as written). It is above MaxComplexity, so the complexity
	// limit stays the precise one for large legitimate operations.
	DefaultMaxFields = 4000
	// DefaultMaxFieldRepeats bounds how many selections merge into one response field (same response name under
	// the same parent path, fragments expanded): the overlapping-fields validation is quadratic in it.
	DefaultMaxFieldRepeats = 20
	// DefaultMaxNesting bounds the nesting of selection sets with fragments expanded (introspection included;
	// MaxQueryDepth is the tighter limit on data fields, checked after validation).
	DefaultMaxNesting = 32
	// DefaultMaxListItems bounds the items of any JSON list in a request's variables and extensions.
	DefaultMaxListItems = 10000
	// DefaultMaxConcurrent bounds one principal's GraphQL requests in flight (429 above it).
	DefaultMaxConcurrent = 16
	// DefaultMaxInFlight bounds the GraphQL requests the process runs at once across all principals (503 with
	// Retry-After above it, after DefaultQueueWait): above the Neo4j pool (50 connections), so a full pool queues
	// inside the driver for a moment rather than refusing, and far below what a 2-core process can hold open
	// without every request slowing down together.
	DefaultMaxInFlight = 64
	// DefaultQueueWait is how long a request waits for one of those slots before it is refused.
	DefaultQueueWait = 250 * time.Millisecond
	// DefaultCostPerSecond is one principal's query budget in complexity units per second (429 when spent);
	// DefaultCostBurst is what it may spend at once (at least MaxComplexity, so any allowed operation fits).
	DefaultCostPerSecond = 50000
	DefaultCostBurst     = 100000
	// DefaultQueryCacheBytes bounds the parsed-query cache (estimated heap).
	DefaultQueryCacheBytes = 32 << 20
	// DefaultAPQCacheBytes bounds the automatic-persisted-query cache (query text and hash).
	DefaultAPQCacheBytes = 8 << 20
)

// Limits bounds what one GraphQL request may cost before gqlgen parses, validates or runs it. Zero values are
// replaced by the defaults above.
type Limits struct {
	MaxBodyBytes    int64         `help:"Largest /graphql POST body or GET query string in bytes (413/414 above)." default:"262144" env:"HEADWATER_GRAPHQL_MAX_BODY_BYTES" yaml:"maxBodyBytes"`
	MaxTokens       int           `help:"Largest number of lexical tokens in a GraphQL document." default:"10000" env:"HEADWATER_GRAPHQL_MAX_TOKENS" yaml:"maxTokens"`
	MaxFragments    int           `help:"Largest number of fragment definitions in a document." default:"100" env:"HEADWATER_GRAPHQL_MAX_FRAGMENTS" yaml:"maxFragments"`
	MaxSpreads      int           `help:"Largest number of fragment spreads written in a document." default:"500" env:"HEADWATER_GRAPHQL_MAX_SPREADS" yaml:"maxSpreads"`
	MaxFields       int           `help:"Largest number of field selections with fragments expanded." default:"4000" env:"HEADWATER_GRAPHQL_MAX_FIELDS" yaml:"maxFields"`
	MaxFieldRepeats int           `help:"Largest number of selections merging into one response field." default:"20" env:"HEADWATER_GRAPHQL_MAX_FIELD_REPEATS" yaml:"maxFieldRepeats"`
	MaxNesting      int           `help:"Deepest nesting of selection sets with fragments expanded." default:"32" env:"HEADWATER_GRAPHQL_MAX_NESTING" yaml:"maxNesting"`
	MaxListItems    int           `help:"Largest JSON list in a request's variables or extensions." default:"10000" env:"HEADWATER_GRAPHQL_MAX_LIST_ITEMS" yaml:"maxListItems"`
	MaxConcurrent   int           `help:"GraphQL requests one principal may have in flight (429 above)." default:"16" env:"HEADWATER_GRAPHQL_MAX_CONCURRENT" yaml:"maxConcurrent"`
	MaxInFlight     int           `help:"GraphQL requests the process runs at once, all principals together (503 with Retry-After above it)." default:"64" env:"HEADWATER_GRAPHQL_MAX_IN_FLIGHT" yaml:"maxInFlight"`
	QueueWait       time.Duration `help:"How long a request waits for an in-flight slot before it is refused with 503." default:"250ms" env:"HEADWATER_GRAPHQL_QUEUE_WAIT" yaml:"queueWait"`
	CostPerSecond   int           `help:"Query budget of one principal in complexity units per second (429 when spent)." default:"50000" env:"HEADWATER_GRAPHQL_COST_PER_SECOND" yaml:"costPerSecond"`
	CostBurst       int           `help:"Complexity one principal may spend at once (at least the complexity limit)." default:"100000" env:"HEADWATER_GRAPHQL_COST_BURST" yaml:"costBurst"`
	QueryCacheBytes int64         `help:"Bound of the parsed-query cache (estimated heap bytes)." default:"33554432" env:"HEADWATER_GRAPHQL_QUERY_CACHE_BYTES" yaml:"queryCacheBytes"`
	APQCacheBytes   int64         `help:"Bound of the automatic-persisted-query cache (bytes of query text)." default:"8388608" env:"HEADWATER_GRAPHQL_APQ_CACHE_BYTES" yaml:"apqCacheBytes"`
}

// WithDefaults fills zero settings with the defaults.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def64 := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def64(&l.MaxBodyBytes, DefaultMaxBodyBytes)
	def(&l.MaxTokens, DefaultMaxTokens)
	def(&l.MaxFragments, DefaultMaxFragments)
	def(&l.MaxSpreads, DefaultMaxSpreads)
	def(&l.MaxFields, DefaultMaxFields)
	def(&l.MaxFieldRepeats, DefaultMaxFieldRepeats)
	def(&l.MaxNesting, DefaultMaxNesting)
	def(&l.MaxListItems, DefaultMaxListItems)
	def(&l.MaxConcurrent, DefaultMaxConcurrent)
	def(&l.MaxInFlight, DefaultMaxInFlight)
	if l.QueueWait == 0 {
		l.QueueWait = DefaultQueueWait
	}
	def(&l.CostPerSecond, DefaultCostPerSecond)
	def(&l.CostBurst, DefaultCostBurst)
	def64(&l.QueryCacheBytes, DefaultQueryCacheBytes)
	def64(&l.APQCacheBytes, DefaultAPQCacheBytes)
	return l
}

// Validate reports the first invalid setting by name (after defaults are applied).
func (l Limits) Validate() error {
	l = l.WithDefaults()
	for _, s := range []struct {
		name string
		v    int64
	}{
		{"max-body-bytes", l.MaxBodyBytes}, {"max-tokens", int64(l.MaxTokens)}, {"max-fragments", int64(l.MaxFragments)},
		{"max-spreads", int64(l.MaxSpreads)}, {"max-fields", int64(l.MaxFields)},
		{"max-field-repeats", int64(l.MaxFieldRepeats)}, {"max-nesting", int64(l.MaxNesting)},
		{"max-list-items", int64(l.MaxListItems)}, {"max-concurrent", int64(l.MaxConcurrent)},
		{"max-in-flight", int64(l.MaxInFlight)},
		{"cost-per-second", int64(l.CostPerSecond)}, {"cost-burst", int64(l.CostBurst)},
		{"query-cache-bytes", l.QueryCacheBytes}, {"apq-cache-bytes", l.APQCacheBytes},
	} {
		if s.v < 1 {
			return fmt.Errorf("graphql.%s: must be at least 1, got %d", s.name, s.v)
		}
	}
	switch {
	case l.MaxBodyBytes < minBodyBytes:
		return fmt.Errorf("graphql.max-body-bytes: must be at least %d (the introspection query needs it), got %d", minBodyBytes, l.MaxBodyBytes)
	case l.QueueWait < 0 || l.QueueWait > maxQueueWait:
		return fmt.Errorf("graphql.queue-wait: must be between 0 and %s, got %s", maxQueueWait, l.QueueWait)
	case l.MaxFields < MaxComplexity:
		return fmt.Errorf("graphql.max-fields: must be at least the complexity limit %d, got %d", MaxComplexity, l.MaxFields)
	case l.CostBurst < MaxComplexity:
		return fmt.Errorf("graphql.cost-burst: must be at least the complexity limit %d, got %d", MaxComplexity, l.CostBurst)
	case l.MaxNesting < MaxQueryDepth:
		return fmt.Errorf("graphql.max-nesting: must be at least the depth limit %d, got %d", MaxQueryDepth, l.MaxNesting)
	}
	return nil
}

// maxQueueWait bounds the queue wait: a longer wait is a timeout, not an early refusal.
const maxQueueWait = 10 * time.Second

// minBodyBytes is the smallest accepted body limit.
const minBodyBytes = 4 << 10
