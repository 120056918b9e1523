// Package oracle is the event decoder as it was before the single pass (ADR 0037), kept verbatim (package and
// import names aside) as the reference the differential tests of ingest/olevent/decode compare the new decoder
// with: the same accept/reject set, the same error field and rule, the same Event. It is imported by tests only.
package oracle
