package fold

import (
	"crypto/sha256"
	"encoding/hex"

	json "github.com/goccy/go-json"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// Kinds of entries in a dataset's observation log.
const (
	ObsSchema  = "schema"  // a full schema: omitted fields close
	ObsMention = "mention" // fields named by column lineage: open if needed, never close others
	ObsLife    = "life"    // lifecycleStateChange
	ObsDecl    = "decl"    // lineage facet: declared upstream datasets
)

// Lifecycle-state names from the lifecycleStateChange facet.
const (
	LifeCreate    = "CREATE"
	LifeDrop      = "DROP"
	LifeRename    = "RENAME"
	LifeOverwrite = "OVERWRITE"
	LifeTruncate  = "TRUNCATE"
)

// Obs is one observation about a dataset, kept (sorted) in the dataset's state so derived state (fields,
// drops, declared lineage) can be recomputed whatever order events arrive in.
type Obs struct {
	T      int64                 `json:"t"`
	Event  string                `json:"e,omitempty"` // "" for schema observations (their hash orders ties)
	Hash   string                `json:"h,omitempty"` // schema observations: key into the dataset state's schemas
	Kind   string                `json:"k"`
	Fields []olevent.SchemaField `json:"f,omitempty"`
	Paths  []string              `json:"p,omitempty"`
	State  string                `json:"s,omitempty"`
	Keys   []string              `json:"d,omitempty"`
	Prod   string                `json:"pr,omitempty"`
	// DeclFields are the lineage facet's field-level declarations (ObsDecl only).
	DeclFields []DeclField `json:"df,omitempty"`
	// R marks a schema or mention observed on read (an input's schema, a column-lineage input field): it folds
	// into the read layer, which never opens, closes or changes what the dataset's owners reported.
	R bool `json:"r,omitempty"`
}

// DeclField is one declared field mapping: input field -> this dataset's field Out.
type DeclField struct {
	In      string                   `json:"i"`
	InField string                   `json:"if"`
	Out     string                   `json:"o"`
	TT      []olevent.Transformation `json:"tt,omitempty"`
}

func obsRank(k string) int {
	switch k {
	case ObsLife:
		return 0
	case ObsSchema:
		return 1
	case ObsMention:
		return 2
	}
	return 3
}

// ObsLess is the order a dataset's log folds in: time; ties: lifecycle, schema, mention, declaration; then event
// id, schema hash, the owner's observation before a reader's.
func ObsLess(a, b Obs) bool {
	if a.T != b.T {
		return a.T < b.T
	}
	if ra, rb := obsRank(a.Kind), obsRank(b.Kind); ra != rb {
		return ra < rb
	}
	if a.Event != b.Event {
		return a.Event < b.Event
	}
	if a.Hash != b.Hash {
		return a.Hash < b.Hash
	}
	return !a.R && b.R // the owner's observation first
}

// Sealable observations are those a dataset log's chunks hold: schemas and mentions (the bulk).
func Sealable(o Obs) bool { return o.Kind == ObsSchema || o.Kind == ObsMention }

// Foldable observations are those the field fold (and so a sealed base) depends on.
func Foldable(o Obs) bool { return Sealable(o) || o.Kind == ObsLife }

// SchemaKey is a schema observation's hash: the one it carries, else computed from its fields.
func (o Obs) SchemaKey() string {
	if o.Hash != "" {
		return o.Hash
	}
	return SchemaHash(o.Fields)
}

// SchemaHash identifies a schema by its content.
func SchemaHash(fields []olevent.SchemaField) string {
	b, _ := json.Marshal(fields)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// LatestFoldable is the log's last observation in fold order that the field fold depends on, or nil.
func LatestFoldable(log []Obs) *Obs {
	var last *Obs
	for i := range log {
		if o := &log[i]; Foldable(*o) && (last == nil || ObsLess(*last, *o)) {
			last = o
		}
	}
	return last
}
