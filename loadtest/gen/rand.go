package gen

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// Random streams: every consumer of randomness gets its own PCG stream so that adding a draw in one place
// does not shift the bytes produced elsewhere.
const (
	streamWorld    uint64 = 1
	streamHubs     uint64 = 2
	streamRuns     uint64 = 3
	streamIDs      uint64 = 4
	streamDelivery uint64 = 5
	streamJobBase  uint64 = 1 << 32 // + job id * 8 + output index: column-lineage mappings
)

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// hash64 mixes strings into a seed (used to make run ids depend on the prefix as well as the seed).
func hash64(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0x1f})
	}
	return h.Sum64()
}

// uuidFrom formats 16 random bytes as a version-4 UUID.
func uuidFrom(r *rand.Rand) string {
	var b [16]byte
	hi, lo := r.Uint64(), r.Uint64()
	for i := range 8 {
		b[i] = byte(hi >> (8 * i))
		b[8+i] = byte(lo >> (8 * i))
	}
	return formatUUID(b)
}

// uuidOf derives a stable version-4 UUID from strings (parent and root runs of a schedule slot).
func uuidOf(parts ...string) string {
	r := newRand(hash64(parts...), hash64(append([]string{"salt"}, parts...)...))
	return uuidFrom(r)
}

func formatUUID(b [16]byte) string {
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// pick returns a uniformly chosen element.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// UUIDOf derives a stable version-4 UUID from strings; other packages use it for ids that must be
// reproducible (run ids of loaded history).
func UUIDOf(parts ...string) string { return uuidOf(parts...) }
