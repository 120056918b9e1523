package project

import (
	"fmt"

	json "github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"
)

// Event payloads (the canonical rec of every applied event) are stored on Event nodes zstd-compressed: they are
// written once and read back whenever a run or a job is recomputed, and at ~5 KB of JSON per event they were most
// of what a batch transaction wrote to Neo4j (see docs/adr/0014-compact-event-payloads.md). Payloads written as JSON
// strings by earlier versions are still read.

// payloadCodec is safe for concurrent use: EncodeAll and DecodeAll keep no per-call state.
type payloadCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// maxPayloadBytes bounds a decompressed payload (the gateway's body limit is far below it).
const maxPayloadBytes = 64 << 20

var codec = mustCodec()

func mustCodec() payloadCodec {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxPayloadBytes))
	if err != nil {
		panic(err)
	}
	return payloadCodec{enc: enc, dec: dec}
}

// encodePayload is the stored form of a rec.
func encodePayload(r *rec) ([]byte, error) {
	b, err := packState(r)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", r.ID, err)
	}
	return b, nil
}

// decodeRec reads an Event payload: zstd-compressed JSON, or plain JSON from earlier versions.
func decodeRec(payload any) (*rec, error) {
	raw, err := storedJSON(payload)
	if err != nil {
		return nil, fmt.Errorf("decode event payload: %w", err)
	}
	var r rec
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decode event payload: %w", err)
	}
	return &r, nil
}

// packState is the stored form of projection state kept on a node (a dataset's observation state, a job's edge
// checkpoint, a sealed log chunk) and of event payloads: zstd-compressed JSON. These are rewritten whenever a batch
// touches the node, and as JSON text they were most of the bytes the batch transactions wrote
// (docs/adr/0015-projection-without-history-growth.md).
func packState(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return codec.enc.EncodeAll(b, make([]byte, 0, len(b)/4)), nil
}

// unpackState reads what packState wrote, or the plain JSON string earlier versions wrote; nil or "" leaves out
// untouched and reports false.
func unpackState(stored any, out any) (bool, error) {
	if stored == nil {
		return false, nil
	}
	raw, err := storedJSON(stored)
	if err != nil || len(raw) == 0 {
		return false, err
	}
	return true, json.Unmarshal(raw, out)
}

// storedJSON is the JSON of a stored value: zstd-compressed bytes, or a plain string from earlier versions.
func storedJSON(stored any) ([]byte, error) {
	switch s := stored.(type) {
	case []byte:
		b, err := codec.dec.DecodeAll(s, nil)
		if err != nil {
			return nil, fmt.Errorf("decompress: %w", err)
		}
		return b, nil
	case string:
		return []byte(s), nil
	}
	return nil, fmt.Errorf("unexpected %T", stored)
}
