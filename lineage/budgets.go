package lineage

import "time"

// Traversal budgets and their defaults. Every limit of the walk is here (the catalog's search and page bounds
// are in catalog/config.go).
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
	// DefaultTrustGapsTTL is how long one answer's trust gaps are reused in process for the same scope (ADR 0032).
	DefaultTrustGapsTTL = 10 * time.Second
	// (trustgaps.MaxMemo bounds the answers whose trust gaps are kept.)
	// maxImpactFields bounds the fields of one impact report.
	maxImpactFields = 2000
	// DefaultPiiFlowDepth is the depth of a piiFlow request that names none (column steps from an origin).
	DefaultPiiFlowDepth = 10
	// MaxPiiFlowDepth is the deepest a flow goes; a deeper request is clamped, and its stops say DEPTH.
	MaxPiiFlowDepth = 20
	// MaxPiiFlowOrigins bounds the origin fields of one flow (a dataset's tagged fields, or the graph's); more
	// are left out and the answer is truncated.
	MaxPiiFlowOrigins = 200
	// maxPiiFlowScan bounds the datasets a graph-wide piiFlow (no `from`) reads looking for tagged ones the caller
	// may see (the design size, 30,000, fits); beyond it the answer is truncated and says so.
	maxPiiFlowScan = 50000
	// maxPiiFlowScanPage is how many datasets one read of that scan takes.
	maxPiiFlowScanPage = 10000
	// maxPiiFlowFields is the node budget of one flow's walk; reaching it stops the flow with BUDGET stops.
	maxPiiFlowFields = 5000
	// maxPiiFlowTagBytes bounds the tag class a piiFlow request names.
	maxPiiFlowTagBytes = 256
	// maxEffectiveOrigins bounds the tagged fields (per class) one effective-tags answer judges, each a flow of
	// its own over the upstream walk's edges; more make the answer partial with a TRUNCATED gap.
	maxEffectiveOrigins = 200
)
