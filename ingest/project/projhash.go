package project

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/headwater-data/headwater/internal/ordered"
)

// projHashProp is the relationship property holding propsHash of what the projector last wrote to it: a batch
// writes a derived relationship only when its hash differs (an unchanged one costs no statement row, no compare
// and no transaction-log bytes).
const projHashProp = "projHash"

// propsHash is a stable 64-bit digest of a relationship's derived properties (nulls included: a removed
// property is a change).
func propsHash(props map[string]any) int64 {
	var b []byte
	for _, k := range ordered.Keys(props) {
		b = append(append(b, k...), 0)
		b = appendValue(b, props[k])
		b = append(b, 1)
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return int64(h.Sum64() >> 1)
}

// appendValue appends an unambiguous encoding of a property value to b.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'n')
	case int64:
		return binary.LittleEndian.AppendUint64(append(b, 'i'), uint64(x))
	case int:
		return appendValue(b, int64(x))
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		b = binary.LittleEndian.AppendUint32(append(b, 's'), uint32(len(x)))
		return append(b, x...)
	case []any:
		b = binary.LittleEndian.AppendUint32(append(b, '['), uint32(len(x)))
		for _, e := range x {
			b = appendValue(b, e)
		}
		return b
	case []string:
		return appendValue(b, toAny(x))
	case map[string]any:
		b = binary.LittleEndian.AppendUint32(append(b, '{'), uint32(len(x)))
		for _, k := range ordered.Keys(x) {
			b = appendValue(b, k)
			b = appendValue(b, x[k])
		}
		return b
	default:
		return fmt.Appendf(append(b, '?'), "%T%v", v, v)
	}
}
