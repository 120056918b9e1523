package sink

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/headwater-data/headwater/loadtest/gen"
)

// File writes one event per line (newline-delimited JSON) for replay.
type File struct {
	w *bufio.Writer
	c io.Closer
}

var _ Sink = (*File)(nil)

const fileBuffer = 1 << 20

// NewFile writes to wc and closes it on Close.
func NewFile(wc io.WriteCloser) *File { return &File{w: bufio.NewWriterSize(wc, fileBuffer), c: wc} }

// Send appends the events.
func (f *File) Send(_ context.Context, events []gen.Event) ([]Result, error) {
	out := make([]Result, len(events))
	for i, ev := range events {
		if _, err := f.w.Write(ev.Body); err != nil {
			return nil, fmt.Errorf("write event: %w", err)
		}
		if err := f.w.WriteByte('\n'); err != nil {
			return nil, fmt.Errorf("write event: %w", err)
		}
		out[i] = Result{Attempts: 1}
	}
	return out, nil
}

// Close flushes and closes the file.
func (f *File) Close() error {
	if err := f.w.Flush(); err != nil {
		_ = f.c.Close()
		return fmt.Errorf("flush: %w", err)
	}
	return f.c.Close()
}
