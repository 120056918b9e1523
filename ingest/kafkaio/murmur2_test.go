package kafkaio

import "testing"

// Vectors from the Kafka Java client's UtilsTest.testMurmur2.
func TestMurmur2MatchesKafka(t *testing.T) {
	cases := map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	}
	for in, want := range cases {
		h := NewMurmur2()
		_, _ = h.Write([]byte(in))
		if got := int32(h.Sum32()); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}
