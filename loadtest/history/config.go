package history

import (
	"errors"
	"fmt"
	"time"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// Defaults: a year of compacted edges, 30 days of run detail, batches of about 10k rows, 4 writers.
const (
	DefaultHistoryDays = 365
	DefaultRunDays     = 30
	DefaultBatchRows   = 10000
	DefaultWriters     = 4
	rowsPerRunEstimate = 7 // Run node + OF_JOB + ~3.5 READ + ~1.4 WROTE
	maxBatchRows       = 100000
	maxWriters         = 64
	// NormVersion is written on every node and relationship the loader creates, so loaded data is
	// recognisable: the projector writes its own normaliser version.
	NormVersion = "hwload-1"
)

// Config says what to load. World supplies the shape (and the namespace prefix); RunsPerDay comes from it.
type Config struct {
	World       *gen.World
	HistoryDays int       // days of compacted edge intervals before End
	RunDays     int       // days of run detail before End
	BatchRows   int       // approximate rows (nodes + relationships) per transaction
	Writers     int       // parallel write transactions
	End         time.Time // "now" of the loaded history
	// PIITags writes the world's source tags (gen: a source's personal columns) on the Dataset nodes, for the
	// governance benchmark. The generated events carry no tags facet, so a loaded world with them is no longer the
	// graph the projector writes from the same events (TestLoaderWritesWhatTheProjectorWrites runs without them).
	PIITags bool
}

// ErrConfig reports an invalid loader configuration.
var ErrConfig = errors.New("invalid history config")

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	switch {
	case c.World == nil:
		return fmt.Errorf("%w: world is required", ErrConfig)
	case c.World.Config.Prefix == "":
		return fmt.Errorf("%w: a namespace prefix is required so loaded data cannot collide", ErrConfig)
	case c.HistoryDays < 1 || c.RunDays < 0 || c.RunDays > c.HistoryDays:
		return fmt.Errorf("%w: need 1 <= history-days and 0 <= run-days <= history-days, got %d and %d",
			ErrConfig, c.HistoryDays, c.RunDays)
	case c.BatchRows < 100 || c.BatchRows > maxBatchRows:
		return fmt.Errorf("%w: batch-rows must be in [100, %d], got %d", ErrConfig, maxBatchRows, c.BatchRows)
	case c.Writers < 1 || c.Writers > maxWriters:
		return fmt.Errorf("%w: writers must be in [1, %d], got %d", ErrConfig, maxWriters, c.Writers)
	case c.End.IsZero():
		return fmt.Errorf("%w: end time must be set", ErrConfig)
	}
	return nil
}
