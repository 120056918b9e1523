package search

import "errors"

// Search scan bounds with their defaults (issue 13 item 12: budget.go); the largest page is api.MaxPage.
const (
	// DefaultSearchScanPerPage is how many hits (visible or not) one search page scans at most.
	DefaultSearchScanPerPage = 5_000
	// DefaultSearchScanPerRequest is how many hits all search fields of one request scan together at most.
	DefaultSearchScanPerRequest = 10_000
	// DefaultSearchScanPerPrincipal is how many hits per second one principal's searches scan (burst: twice).
	DefaultSearchScanPerPrincipal = 5_000
)

// Config holds the search scan bounds. Zero values are replaced by the defaults. The flags keep the lineage-
// prefix they had when search was part of package lineage (`--lineage-search-scan-per-page`, ...).
type Config struct {
	SearchScanPerPage      int `help:"Hits one search page scans at most (hidden ones included)." default:"5000" env:"HEADWATER_LINEAGE_SEARCH_SCAN_PER_PAGE" yaml:"searchScanPerPage"`
	SearchScanPerRequest   int `help:"Hits all search fields of one request scan together at most." default:"10000" env:"HEADWATER_LINEAGE_SEARCH_SCAN_PER_REQUEST" yaml:"searchScanPerRequest"`
	SearchScanPerPrincipal int `help:"Hits per second one principal's searches scan (burst twice that); over it a search waits." default:"5000" env:"HEADWATER_LINEAGE_SEARCH_SCAN_PER_PRINCIPAL" yaml:"searchScanPerPrincipal"`
}

// WithDefaults fills zero settings with the defaults.
func (c Config) WithDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.SearchScanPerPage, DefaultSearchScanPerPage)
	def(&c.SearchScanPerRequest, DefaultSearchScanPerRequest)
	def(&c.SearchScanPerPrincipal, DefaultSearchScanPerPrincipal)
	return c
}

// Validate reports the first invalid setting by name (after defaults are applied).
func (c Config) Validate() error {
	c = c.WithDefaults()
	if c.SearchScanPerPage < 1 || c.SearchScanPerRequest < 1 || c.SearchScanPerPrincipal < 1 {
		return errors.New("lineage: search-scan-per-page, -per-request and -per-principal must be at least 1")
	}
	return nil
}
