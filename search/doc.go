// Package search finds datasets and jobs by name for the query API, keeping only those the caller may describe.
//
// Invariants: whether a page is empty, and hasNextPage, depend only on what the caller may see (pages are
// positioned after the last hit returned, never by an offset that would count hidden hits), except where a scan
// bound ends a page (hits per page, per request and per principal and second: budget.go, config.go); cursors
// are sealed and bound to the caller and the query, so a position never shows which hit it names.
package search
