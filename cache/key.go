package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
)

// Tiers.
const (
	// TierNeighbors holds raw neighbour lists; only the expander reads them.
	TierNeighbors = "nb"
	// TierResults holds answers returned to callers, per permission scope.
	TierResults = "res"
)

// keyVersion changes whenever the meaning of a cached value changes. 5: a results-tier page holds its gaps'
// typed stop reasons and is stored before its cursor is bound (issue 15 item 1). 4: a field hop's entry holds the
// far side of the dataset-level lineage of every field, not only of fields without column edges (issue 13 item 10).
const keyVersion = 5

// Key is every input that determines a cached value. Build keys only through String.
type Key struct {
	Tier             string   `json:"tier"`
	Op               string   `json:"op"`             // hop kind (nb) or operation (res)
	Node             string   `json:"node"`           // internal key of the node read from / started at
	Name             string   `json:"name,omitempty"` // results tier: the canonical name the start was found by, when that resolution was reused
	Direction        string   `json:"dir,omitempty"`  // UPSTREAM / DOWNSTREAM / BOTH
	Depth            int      `json:"depth,omitempty"`
	Granularity      string   `json:"gran,omitempty"`
	AsOf             string   `json:"asOf"`           // exact epoch ms, or "now@<bucket>"
	Evidence         []string `json:"ev,omitempty"`   // sorted
	Pubs             []string `json:"pubs,omitempty"` // sorted
	IncludeAttempted bool     `json:"att,omitempty"`
	MaxNodes         int      `json:"max,omitempty"`
	Limit            int      `json:"lim,omitempty"`   // neighbours tier: only the first Limit neighbours in key order
	Page             string   `json:"page,omitempty"`  // digest of the cursor, "" for a first page
	Scope            string   `json:"scope,omitempty"` // permission-scope fingerprint (results tier)
	// Transformations is the lineage query's column-edge filter, canonical (results tier; "" when none).
	Transformations string `json:"tf,omitempty"`
}

// String is the one function that turns a Key into a Redis key: canonical JSON, hashed, typed by tier.
func (k Key) String() string {
	k.Evidence, k.Pubs = sorted(k.Evidence), sorted(k.Pubs)
	b, _ := json.Marshal(struct {
		V int `json:"v"`
		Key
	}{keyVersion, k})
	sum := sha256.Sum256(b)
	return "hw:c:" + k.Tier + ":" + hex.EncodeToString(sum[:20])
}

func sorted(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
