package difftest

import (
	"syscall"
	"testing"
	"time"

	"github.com/headwater-data/headwater/ingest/olevent"
	"github.com/headwater-data/headwater/ingest/olevent/decode"
	"github.com/headwater-data/headwater/ingest/olevent/decode/internal/oracle"
)

// The decoders under one interface, so the before (reference) and after (single pass) run in the same benchmark.
type eventDecoder interface {
	Decode(raw []byte) (olevent.Event, error)
	DecodeValidated(raw []byte) (olevent.Event, error)
}

// benchSets are the real producers' events (the decoder's fixtures and the OpenLineage reference examples the
// reference decoder accepts) and the load generator's (hwload) events.
func benchSets(b *testing.B) map[string][]Sample {
	b.Helper()
	pairs := newPairs(b)
	accepted := func(ss []Sample) []Sample {
		var out []Sample
		for _, s := range ss {
			pairs[0].now = clockFor(s.Raw)
			if _, err := pairs[0].ref.Decode(s.Raw); err == nil {
				out = append(out, s)
			}
		}
		return out
	}
	fx, err := DecoderFixtures()
	if err != nil {
		b.Fatal(err)
	}
	ref, err := ReferenceExamples(ReferenceDir())
	if err != nil {
		b.Fatal(err)
	}
	gen, _, err := GeneratorEvents(2000)
	if err != nil {
		b.Fatal(err)
	}
	sets := map[string][]Sample{"producers": accepted(append(fx, ref...)), "hwload": accepted(gen)}
	for name, s := range sets {
		if len(s) < 10 {
			b.Fatalf("%s: only %d accepted events", name, len(s))
		}
		var n int
		for _, e := range s {
			n += len(e.Raw)
		}
		b.Logf("%s: %d events, mean %d bytes", name, len(s), n/len(s))
	}
	return sets
}

// BenchmarkGatewayDecode is the gateway's Decode plus ResolveID (the content digest) per event, before (ref) and
// after (single), over each set in turn; ns/op and allocs/op are per event.
func BenchmarkGatewayDecode(b *testing.B) {
	benchDecoders(b, func(d eventDecoder, raw []byte) error {
		ev, err := d.Decode(raw)
		if err == nil {
			olevent.ResolveID("", &ev)
			_ = ev.ContentDigest()
		}
		return err
	})
}

// BenchmarkConsumerDecode is the consumer's decode of a gateway-validated event (DecodeValidated), before and
// after.
func BenchmarkConsumerDecode(b *testing.B) {
	benchDecoders(b, func(d eventDecoder, raw []byte) error {
		_, err := d.DecodeValidated(raw)
		return err
	})
}

func benchDecoders(b *testing.B, run func(eventDecoder, []byte) error) {
	sets := benchSets(b)
	clock := func() time.Time { return ExampleTime }
	for _, set := range []string{"producers", "hwload"} {
		events := sets[set]
		var bytes int
		for _, s := range events {
			bytes += len(s.Raw)
		}
		// One clock for all: the time bounds are wide enough for the corpus (400 days); events outside them
		// would be refused by both, so the sets keep only events both accept at their own time.
		lim := olevent.DefaultLimits()
		lim.Horizon = 100 * 365 * 24 * time.Hour
		lim.MaxFuture = 100 * 365 * 24 * time.Hour
		ref, err := oracle.NewDecoder(lim, clock)
		if err != nil {
			b.Fatal(err)
		}
		cur, err := decode.NewDecoder(lim, clock)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range []struct {
			name string
			dec  eventDecoder
		}{{"ref", ref}, {"single", cur}} {
			b.Run(set+"/"+d.name, func(b *testing.B) {
				b.SetBytes(int64(bytes / len(events)))
				b.ReportAllocs()
				i := 0
				cpu0 := cpuTime()
				for b.Loop() {
					if err := run(d.dec, events[i%len(events)].Raw); err != nil {
						b.Fatal(err)
					}
					i++
				}
				// CPU time of the process per event (GC included): steadier than ns/op on a shared machine.
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(i), "cpu-ns/op")
			})
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
