package kafkaio

import "hash"

// murmur2 is Kafka's default partitioner hash (the Java client's Utils.murmur2), so keys partition exactly as
// producers using the Java or Python clients partition them. sarama's default (FNV-1a) differs.
type murmur2 struct{ data []byte }

// NewMurmur2 returns a hash.Hash32 computing Kafka's murmur2; sarama uses its Sum32 for partitioning, with
// WithAbsFirst matching Java's toPositive (sign bit cleared).
func NewMurmur2() hash.Hash32 { return &murmur2{} }

func (m *murmur2) Write(p []byte) (int, error) { m.data = append(m.data, p...); return len(p), nil }
func (m *murmur2) Sum(b []byte) []byte {
	v := m.Sum32()
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
func (m *murmur2) Reset()         { m.data = m.data[:0] }
func (m *murmur2) Size() int      { return 4 }
func (m *murmur2) BlockSize() int { return 4 }

// Sum32 follows org.apache.kafka.common.utils.Utils.murmur2 (seed 0x9747b28c).
func (m *murmur2) Sum32() uint32 {
	const (
		seed uint32 = 0x9747b28c
		mul  uint32 = 0x5bd1e995
		r           = 24
	)
	data := m.data
	length := len(data)
	h := seed ^ uint32(length)
	for i := 0; i+4 <= length; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= mul
		k ^= k >> r
		k *= mul
		h *= mul
		h ^= k
	}
	tail := length &^ 3
	switch length % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= mul
	}
	h ^= h >> 13
	h *= mul
	h ^= h >> 15
	return h
}
