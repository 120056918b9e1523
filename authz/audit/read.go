package audit

import (
	"time"
)

// AuditQuery selects a page of the audit stream, newest first.
type AuditQuery struct {
	// Limit is the most records the page returns (1..MaxAuditPage).
	Limit int
	// Before holds, per partition, the offset the page reads below (exclusive): a previous page's Next. Nil
	// starts at the current end of every partition; a partition missing from a non-nil Before (created after the
	// first page) is not read.
	Before map[int32]int64
	// Since keeps records whose time is at or after it (zero: no lower bound).
	Since time.Time
	// Principal keeps records of this subject only (empty: all).
	Principal string
	// Decision keeps records with this decision only (empty: both).
	Decision Decision
}

// Matches reports whether a record passes the query's filters.
func (q AuditQuery) Matches(r AuditRecord) bool {
	return (q.Since.IsZero() || !r.Time.Before(q.Since)) && (q.Principal == "" || r.Principal == q.Principal) &&
		(q.Decision == "" || r.Decision == q.Decision)
}

// AuditEntry is one record with its position in the topic.
type AuditEntry struct {
	AuditRecord
	Partition int32
	Offset    int64
}

// AuditPage is one page of the audit stream.
type AuditPage struct {
	Entries []AuditEntry
	// Next is the Before of the next page.
	Next map[int32]int64
	// More is true when records older than this page are left to read (they may turn out not to match).
	More bool
	// Truncated is true when the scan budget (MaxAuditScan records) or the deadline (AuditReadTimeout) ended
	// the page before it was full; Next continues where the scan stopped.
	Truncated bool
	// Scanned counts the records read (matching or not); Undecodable those that were not audit records.
	Scanned, Undecodable int
}

// Limits of one audit-stream read.
const (
	// MaxAuditPage bounds the records one page returns.
	MaxAuditPage = 500
	// MaxAuditScan bounds the records one read scans, matching or not.
	MaxAuditScan = 20_000
	// AuditReadTimeout is the deadline of one read.
	AuditReadTimeout = 10 * time.Second
)
