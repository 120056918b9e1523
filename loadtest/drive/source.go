package drive

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// Source is what the ingest driver sends: a generator stream as it runs, or a corpus generated before the run so
// the generator's CPU is off the measured path (docs/adr/0038).
type Source interface {
	// Next is the next event of the main phase; false when the source has no more.
	Next() (gen.Event, bool)
	// NextPending is the next event of the runs already started (IngestConfig.FinishRuns); false when none.
	NextPending() (gen.Event, bool)
	// Stats is the shape of what the source generated.
	Stats() gen.Stats
}

// StreamSource sends a generator stream as it runs (it never ends).
func StreamSource(s *gen.Stream) Source { return streamSource{s} }

type streamSource struct{ s *gen.Stream }

func (s streamSource) Next() (gen.Event, bool)        { return s.s.Next(), true }
func (s streamSource) NextPending() (gen.Event, bool) { return s.s.NextPending() }
func (s streamSource) Stats() gen.Stats               { return s.s.Stats() }

// Corpus is a pre-generated stream: the main phase's events, then the rest of the runs they started. Only the
// bodies travel (the driver sends bytes; ids come back from the gateway).
type Corpus struct {
	Main    [][]byte
	Pending [][]byte
	Gen     gen.Stats
	next    int
	pend    int
}

var _ Source = (*Corpus)(nil)

// Generate takes main events from the stream, then (with finish) every event of the runs they started.
func Generate(s *gen.Stream, main int, finish bool) *Corpus {
	c := &Corpus{Main: make([][]byte, 0, main)}
	for range main {
		c.Main = append(c.Main, s.Next().Body)
	}
	for finish {
		ev, ok := s.NextPending()
		if !ok {
			break
		}
		c.Pending = append(c.Pending, ev.Body)
	}
	c.Gen = s.Stats()
	return c
}

// Next returns the next main event.
func (c *Corpus) Next() (gen.Event, bool) {
	if c.next >= len(c.Main) {
		return gen.Event{}, false
	}
	c.next++
	return gen.Event{Body: c.Main[c.next-1]}, true
}

// NextPending returns the next event finishing the runs started (after the main phase).
func (c *Corpus) NextPending() (gen.Event, bool) {
	if c.pend >= len(c.Pending) {
		return gen.Event{}, false
	}
	c.pend++
	return gen.Event{Body: c.Pending[c.pend-1]}, true
}

// Stats is the shape of the whole corpus as generated.
func (c *Corpus) Stats() gen.Stats { return c.Gen }

// corpusMagic starts a corpus file: then a uvarint-length JSON header, then each body uvarint-length-prefixed.
const corpusMagic = "hwcorpus1\n"

type corpusHeader struct {
	Main    int       `json:"main"`
	Pending int       `json:"pending"`
	Stats   gen.Stats `json:"stats"`
}

// WriteCorpus stores the corpus in path.
func WriteCorpus(path string, c *Corpus) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("corpus %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	head, err := json.Marshal(corpusHeader{Main: len(c.Main), Pending: len(c.Pending), Stats: c.Gen})
	if err != nil {
		_ = f.Close()
		return err
	}
	_, _ = w.WriteString(corpusMagic)
	var n [binary.MaxVarintLen64]byte
	for _, b := range append([][]byte{head}, append(c.Main, c.Pending...)...) {
		_, _ = w.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		_, _ = w.Write(b)
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("corpus %s: %w", path, err)
	}
	return f.Close()
}

// ReadCorpus loads a corpus file written by WriteCorpus.
func ReadCorpus(path string) (*Corpus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read-only
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(corpusMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != corpusMagic {
		return nil, fmt.Errorf("corpus %s: not a corpus file", path)
	}
	part := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return b, err
	}
	head, err := part()
	if err != nil {
		return nil, fmt.Errorf("corpus %s: header: %w", path, err)
	}
	var h corpusHeader
	if err := json.Unmarshal(head, &h); err != nil {
		return nil, fmt.Errorf("corpus %s: header: %w", path, err)
	}
	c := &Corpus{Gen: h.Stats, Main: make([][]byte, 0, h.Main), Pending: make([][]byte, 0, h.Pending)}
	for i := range h.Main + h.Pending {
		b, err := part()
		if err != nil {
			return nil, fmt.Errorf("corpus %s: event %d: %w", path, i, errors.Join(err, io.ErrUnexpectedEOF))
		}
		if i < h.Main {
			c.Main = append(c.Main, b)
		} else {
			c.Pending = append(c.Pending, b)
		}
	}
	return c, nil
}
