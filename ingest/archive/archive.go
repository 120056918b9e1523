// Package archive is the immutable raw-event archive: every accepted event is appended before its Kafka offset is
// committed, so the graph can always be rebuilt (`headwater replay`) even after Kafka retention has dropped it.
//
// The default store is a local directory of append-only segment files. Each Append writes one gzip member (a
// complete gzip stream; concatenated members form a valid multi-member gzip file) of newline-delimited JSON records
// and fsyncs it. A crash can leave a torn last member; Read stops at it and reports it. Segments rotate by size and
// are named so that lexical order is write order. Records may repeat (a batch re-consumed after a crash is appended
// again); replay is idempotent because projection deduplicates by event id.
package archive

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/headwater-data/headwater/ingest/ownership"
)

// Record is one archived event with its envelope metadata.
type Record struct {
	EventID    string          `json:"eventId"`
	ReceivedAt time.Time       `json:"receivedAt"`
	Principal  string          `json:"principal,omitempty"`
	Source     string          `json:"source"`
	Topic      string          `json:"topic,omitempty"`
	Partition  int32           `json:"partition"`
	Offset     int64           `json:"offset"`
	Event      json.RawMessage `json:"event"`
	// Owned is what the event may change, decided when it was accepted (ADR 0018); absent: unrestricted.
	Owned ownership.Set `json:"owned,omitzero"`
}

// Config is the archive configuration.
type Config struct {
	Dir          string `help:"Directory of the raw-event archive." default:".state/archive" env:"HEADWATER_ARCHIVE_DIR" yaml:"dir"`
	SegmentBytes int64  `help:"Rotate a segment after this many compressed bytes." default:"67108864" env:"HEADWATER_ARCHIVE_SEGMENT_BYTES" yaml:"segmentBytes"`
}

// Validate reports the first invalid setting by name.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("archive.dir: must not be empty")
	}
	if c.SegmentBytes < 1<<20 {
		return fmt.Errorf("archive.segment-bytes: must be at least 1 MiB, got %d", c.SegmentBytes)
	}
	return nil
}

const segmentSuffix = ".ndjson.gz"

// Dir is a directory-backed archive. It is safe for concurrent use.
type Dir struct {
	cfg  Config
	mu   sync.Mutex
	f    *os.File
	size int64
	now  func() time.Time
	seq  int
}

// OpenDir opens (creating) the archive directory for appending.
func OpenDir(c Config, now func() time.Time) (*Dir, error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("archive dir %s: %w", c.Dir, err)
	}
	return &Dir{cfg: c, now: now}, nil
}

// Append writes the records durably (fsync) as one gzip member.
func (d *Dir) Append(_ context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	var buf strings.Builder
	// klauspost/compress's gzip at its fastest level: the same format (any gzip reader reads it) at a fraction
	// of compress/gzip's CPU, which the consumer spends on every batch.
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("archive encode %s: %w", r.EventID, err)
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil || d.size >= d.cfg.SegmentBytes {
		if err := d.rotate(); err != nil {
			return err
		}
	}
	n, err := d.f.WriteString(buf.String())
	d.size += int64(n)
	if err != nil {
		return fmt.Errorf("archive write: %w", err)
	}
	if err := d.f.Sync(); err != nil {
		return fmt.Errorf("archive sync: %w", err)
	}
	return nil
}

func (d *Dir) rotate() error {
	if d.f != nil {
		if err := d.f.Close(); err != nil {
			return err
		}
	}
	d.seq++
	name := fmt.Sprintf("%s-%d-%06d%s", d.now().UTC().Format("20060102T150405.000000000Z"), os.Getpid(), d.seq, segmentSuffix)
	f, err := os.OpenFile(filepath.Join(d.cfg.Dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("archive segment: %w", err)
	}
	d.f, d.size = f, 0
	return nil
}

// Close closes the current segment.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// ErrTorn marks a segment whose last member was cut short by a crash; the records before it were delivered.
var ErrTorn = errors.New("archive segment ends in a torn write")

// Read calls fn for every record in write order. A torn tail of a segment is reported through torn (if not nil)
// and skipped: it was never acknowledged to Kafka, so the events in it were re-consumed and appended again.
func Read(dir string, fn func(Record) error, torn func(segment string, err error)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("archive dir %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), segmentSuffix) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		err := readSegment(filepath.Join(dir, n), fn)
		if errors.Is(err, ErrTorn) {
			if torn != nil {
				torn(n, err)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readSegment(path string, fn func(Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrTorn, path, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrTorn, path, err)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrTorn, path, err)
	}
	return nil
}
