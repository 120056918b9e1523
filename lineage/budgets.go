package lineage

import (
	"math"
	"time"
)

// Traversal budgets and their defaults. Every limit of the query path is here.
const (
	// DefaultMaxDepth is the server cap on hops per page; a deeper request is served in pages of this many hops.
	DefaultMaxDepth = 20
	// DefaultDepth is the depth of a lineage request that names none.
	DefaultDepth = 3
	// DefaultImpactDepth is the depth of an impact request that names none.
	DefaultImpactDepth = 5
	// DefaultMaxNodes is the node budget per page when the request names none.
	DefaultMaxNodes = 500
	// DefaultMaxNodesCap is the largest node budget a request may ask for.
	DefaultMaxNodesCap = 5000
	// DefaultFanOut is how many neighbours of one node one page returns; a node with more gets a fan-out marker.
	DefaultFanOut = 200
	// DefaultDeadline is the time budget of one page; reaching it returns what was found with a cursor.
	DefaultDeadline = 5 * time.Second
	// DefaultStaleMin is the smallest staleness threshold of an observed edge.
	DefaultStaleMin = 24 * time.Hour
	// DefaultStaleFactor multiplies a job's usual interval between runs to get its edges' staleness threshold.
	DefaultStaleFactor = 3.0
	// DefaultNowBucket is how "now" is bucketed in cache keys (explicit asOf values are keyed exactly).
	DefaultNowBucket = 5 * time.Minute
	// DefaultRawCacheTTL bounds the life of a cached neighbour list (generations invalidate it earlier).
	DefaultRawCacheTTL = 10 * time.Minute
	// DefaultResultCacheTTL bounds the life of a cached answer (generations invalidate it earlier).
	DefaultResultCacheTTL = 5 * time.Minute
	// MaxSearchPage is the largest page of search, runs and versions.
	MaxSearchPage = 100
	// maxPageOffset is the largest offset an offset cursor ("o:<n>") may carry; a larger one is no cursor this
	// service made (the store fails on offsets near the 64-bit limit instead of answering an empty page).
	maxPageOffset = math.MaxInt32
	// DefaultSearchScanPerPage is how many hits (visible or not) one search page scans at most.
	DefaultSearchScanPerPage = 5_000
	// DefaultSearchScanPerRequest is how many hits all search fields of one request scan together at most.
	DefaultSearchScanPerRequest = 10_000
	// DefaultSearchScanPerPrincipal is how many hits per second one principal's searches scan (burst: twice).
	DefaultSearchScanPerPrincipal = 5_000
	// maxGapNodes bounds the node ids listed in one TRUNCATED gap.
	maxGapNodes = 50
	// maxImpactFields bounds the fields of one impact report.
	maxImpactFields = 2000
)
