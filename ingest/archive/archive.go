// Package archive is the immutable raw-event archive: every accepted event is appended before its Kafka offset is
// committed, so the graph can always be rebuilt (`headwater replay`) even after Kafka retention has dropped it.
//
// The default store is a local directory of append-only segment files. Each Append writes one gzip member (a
// complete gzip stream; concatenated members form a valid multi-member gzip file) of framed records and fsyncs it.
// A frame is the record's envelope as JSON (Record without Event) and the event's bytes exactly as received, each
// preceded by its length as an unsigned varint (segments named *.frames.gz). Segments written before the framing
// (*.ndjson.gz: newline-delimited Record JSON, the event re-encoded inside) are still read. A crash can leave a
// torn last member; Read stops at it and reports it. Segments rotate by size and are named so that lexical order
// is write order. Records may repeat (a batch re-consumed after a crash is appended again); replay is idempotent
// because projection deduplicates by event id.
package archive

import (
	"bufio"
	"context"
	"encoding/binary"
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

// Segment file suffixes: the framed format written now, and the newline-delimited JSON one written before it.
const (
	segmentSuffix       = ".frames.gz"
	legacySegmentSuffix = ".ndjson.gz"
	// maxFrameBytes bounds one frame part when reading (the gateway's body limit is far below it).
	maxFrameBytes = 64 << 20
)

// envelope is a Record without its event: the JSON part of a frame.
type envelope struct {
	EventID    string        `json:"eventId"`
	ReceivedAt time.Time     `json:"receivedAt"`
	Principal  string        `json:"principal,omitempty"`
	Source     string        `json:"source"`
	Topic      string        `json:"topic,omitempty"`
	Partition  int32         `json:"partition"`
	Offset     int64         `json:"offset"`
	Owned      ownership.Set `json:"owned,omitzero"`
}

func envelopeOf(r Record) envelope {
	return envelope{EventID: r.EventID, ReceivedAt: r.ReceivedAt, Principal: r.Principal, Source: r.Source,
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Owned: r.Owned}
}

func (e envelope) record(event []byte) Record {
	return Record{EventID: e.EventID, ReceivedAt: e.ReceivedAt, Principal: e.Principal, Source: e.Source,
		Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, Event: event, Owned: e.Owned}
}

// appendFrame writes one record's frame: the envelope JSON and the event bytes as they are, each length-prefixed.
// The event is not re-encoded (encoding/json would validate and compact it again: ~0.03 ms per event).
func appendFrame(w io.Writer, r Record) error {
	head, err := json.Marshal(envelopeOf(r))
	if err != nil {
		return err
	}
	var n [2 * binary.MaxVarintLen64]byte
	k := binary.PutUvarint(n[:], uint64(len(head)))
	if _, err := w.Write(n[:k]); err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	k = binary.PutUvarint(n[:], uint64(len(r.Event)))
	if _, err := w.Write(n[:k]); err != nil {
		return err
	}
	_, err = w.Write(r.Event)
	return err
}

// Dir is a directory-backed archive. It is safe for concurrent use.
type Dir struct {
	cfg  Config
	mu   sync.Mutex
	f    *os.File
	size int64
	now  func() time.Time
	seq  int
	// failed is the last append's error, nil after a success (Ping).
	failed error
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
	for _, r := range recs {
		if err := appendFrame(zw, r); err != nil {
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
			d.failed = err
			return err
		}
	}
	if err := d.write(buf.String()); err != nil {
		d.failed = err
		return err
	}
	d.failed = nil
	return nil
}

// write appends one gzip member and syncs it. A write that fails part way (a full disk, a file size limit) is cut
// back to the segment's previous end, so the segment never holds a torn member before later ones: Read would stop
// at it and skip every record after it in the segment (the batch is retried, and appended again, once there is
// room).
func (d *Dir) write(member string) error {
	n, err := d.f.WriteString(member)
	if err == nil {
		err = d.f.Sync()
		if err != nil {
			err = fmt.Errorf("archive sync: %w", err)
		}
	} else {
		err = fmt.Errorf("archive write: %w", err)
	}
	if err == nil {
		d.size += int64(n)
		return nil
	}
	if terr := d.f.Truncate(d.size); terr != nil {
		// The segment cannot be repaired in place: the next append starts a new one.
		_ = d.f.Close()
		d.f = nil
		return errors.Join(err, fmt.Errorf("archive truncate after a failed write: %w", terr))
	}
	return err
}

// Ping reports the last append's failure (nil once an append has succeeded again): readiness shows a full or
// failing archive disk while the consumer waits for it.
func (d *Dir) Ping(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed
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
		if strings.HasSuffix(e.Name(), segmentSuffix) || strings.HasSuffix(e.Name(), legacySegmentSuffix) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names) // the names start with their creation time, so the order holds across both formats
	for _, n := range names {
		read := readSegment
		if strings.HasSuffix(n, legacySegmentSuffix) {
			read = readLegacySegment
		}
		err := read(filepath.Join(dir, n), fn)
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

// openSegment opens a segment's gzip stream; nil without error for an empty file.
func openSegment(path string) (*os.File, *gzip.Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if errors.Is(err, io.EOF) {
		_ = f.Close()
		return nil, nil, nil
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrTorn, path, err)
	}
	return f, zr, nil
}

// readSegment reads a framed segment.
func readSegment(path string, fn func(Record) error) error {
	f, zr, err := openSegment(path)
	if err != nil || f == nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	br := bufio.NewReaderSize(zr, 256<<10)
	for {
		head, err := readPart(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrTorn, path, err)
		}
		var e envelope
		if err := json.Unmarshal(head, &e); err != nil {
			return fmt.Errorf("%w: %s: envelope: %v", ErrTorn, path, err)
		}
		event, err := readPart(br)
		if err != nil {
			return fmt.Errorf("%w: %s: event %s: %v", ErrTorn, path, e.EventID, noEOF(err))
		}
		if err := fn(e.record(event)); err != nil {
			return err
		}
	}
}

// readPart reads one length-prefixed frame part; io.EOF only when the stream ends before its length.
func readPart(br *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, err
	}
	if n > maxFrameBytes {
		return nil, fmt.Errorf("frame part of %d bytes is over the %d-byte limit", n, maxFrameBytes)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(br, b); err != nil {
		return nil, noEOF(err)
	}
	return b, nil
}

// noEOF turns an end of stream inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readLegacySegment reads a segment of newline-delimited Record JSON (written before the framing).
func readLegacySegment(path string, fn func(Record) error) error {
	f, zr, err := openSegment(path)
	if err != nil || f == nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
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
