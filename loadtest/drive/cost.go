package drive

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Meter reads what the system under test has spent so far (IngestDriver.SetMeter).
type Meter interface {
	Read(ctx context.Context) (Reading, error)
}

// Reading is one meter reading.
type Reading struct {
	At         time.Time
	CPU        map[string]float64 // CPU seconds (user + system) by process name since each process started
	Projected  int64              // the projector's projected-event counter; -1 unknown
	Visible    Histogram          // the projector's receive-to-visible histogram
	TxLogBytes int64              // Neo4j transaction log position in bytes; -1 unknown
	Load1      float64            // the machine's 1-minute load average
}

// Histogram is a cumulative Prometheus histogram: Counts[i] observations ≤ Bounds[i] (the last bound is +Inf).
type Histogram struct {
	Bounds []float64
	Counts []float64
}

// GeneratorProcess names the load generator's own process in Cost (reported apart from the system's all-in).
const GeneratorProcess = "hwload"

// Cost is what a run cost the system under test between the start of sending and the end of the drain (every
// accepted event projected, unless the drain timed out), per projected event in that window.
type Cost struct {
	WindowSeconds       float64 `json:"windowSeconds"`
	SendSeconds         float64 `json:"sendSeconds"`
	Projected           int64   `json:"projected"`           // in the window, from the projector's counter
	ProjectedDuringSend int64   `json:"projectedDuringSend"` // while sending
	ProjectedPerSec     float64 `json:"projectedPerSec"`     // while sending
	// ProjectedPerSecWindow is Projected over the whole window: a closed-loop run's ceiling (the projector
	// working through a full queue until it is empty).
	ProjectedPerSecWindow float64            `json:"projectedPerSecWindow"`
	CPUSeconds            map[string]float64 `json:"cpuSeconds"`          // by process, in the window
	CPUMsPerEvent         map[string]float64 `json:"cpuMsPerEvent"`       // by process, per projected event
	AllInMsPerEvent       float64            `json:"allInMsPerEvent"`     // every process but the generator
	GeneratorMsPerEvent   float64            `json:"generatorMsPerEvent"` // hwload itself (a thin client on a corpus)
	TxLogBytes            int64              `json:"txLogBytes"`          // -1 when not read
	TxLogKBPerEvent       float64            `json:"txLogKBPerEvent"`
	// ReceiveToVisible is from the projector's own histogram (gateway receive until committed), interpolated in
	// its buckets (factors of 2 from 5 ms), over the window.
	ReceiveToVisible Percentiles `json:"receiveToVisible"`
	// LagTrend is the least-squares slope of the consumer lag while sending (first 10 s left out), messages per
	// second: about 0 when projection keeps up, the shortfall in events/s when it does not.
	LagTrend float64 `json:"lagTrendPerSec"`
	LagMax   int64   `json:"lagMaxWhileSending"`
	LoadAvg  struct {
		Start float64 `json:"start"`
		Sent  float64 `json:"sent"`
		End   float64 `json:"end"`
	} `json:"loadAvg1"`
}

// costOf computes the cost from the readings at the start, when sending stopped and at the end.
func costOf(first, sent, last *Reading, tl []Second, sendTime time.Duration) Cost {
	c := Cost{SendSeconds: sendTime.Seconds(), TxLogBytes: -1, CPUSeconds: map[string]float64{},
		CPUMsPerEvent: map[string]float64{}}
	c.LagTrend, c.LagMax = lagTrend(tl, int(sendTime.Seconds()))
	if first == nil || last == nil {
		return c
	}
	c.WindowSeconds = last.At.Sub(first.At).Seconds()
	c.LoadAvg.Start, c.LoadAvg.End = first.Load1, last.Load1
	if first.Projected >= 0 && last.Projected >= 0 {
		c.Projected = last.Projected - first.Projected
	}
	if sent != nil {
		c.LoadAvg.Sent = sent.Load1
		if sent.Projected >= 0 && first.Projected >= 0 {
			c.ProjectedDuringSend = sent.Projected - first.Projected
			if s := sent.At.Sub(first.At).Seconds(); s > 0 {
				c.ProjectedPerSec = float64(c.ProjectedDuringSend) / s
			}
		}
	}
	for name, end := range last.CPU {
		if start, ok := first.CPU[name]; ok {
			c.CPUSeconds[name] = end - start
		}
	}
	if first.TxLogBytes >= 0 && last.TxLogBytes >= 0 {
		c.TxLogBytes = last.TxLogBytes - first.TxLogBytes
	}
	c.ReceiveToVisible = histogramDelta(first.Visible, last.Visible)
	if c.Projected <= 0 {
		return c
	}
	if c.WindowSeconds > 0 {
		c.ProjectedPerSecWindow = float64(c.Projected) / c.WindowSeconds
	}
	per := float64(c.Projected)
	for name, s := range c.CPUSeconds {
		c.CPUMsPerEvent[name] = s * 1000 / per
		if name == GeneratorProcess {
			c.GeneratorMsPerEvent = c.CPUMsPerEvent[name]
		} else {
			c.AllInMsPerEvent += c.CPUMsPerEvent[name]
		}
	}
	if c.TxLogBytes >= 0 {
		c.TxLogKBPerEvent = float64(c.TxLogBytes) / 1024 / per
	}
	return c
}

// lagSettle is how much of the start of a run the lag trend leaves out (the projector catching up on the first
// batches).
const lagSettle = 10

// lagTrend is the least-squares slope of the sampled lag over seconds [lagSettle, sendSecs) and its maximum.
func lagTrend(tl []Second, sendSecs int) (float64, int64) {
	var n, sx, sy, sxx, sxy float64
	var top int64
	for _, s := range tl {
		if s.T >= sendSecs || s.Lag < 0 {
			continue
		}
		top = max(top, s.Lag)
		if s.T < lagSettle {
			continue
		}
		x, y := float64(s.T), float64(s.Lag)
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	if d := n*sxx - sx*sx; n >= 2 && d != 0 {
		return (n*sxy - sx*sy) / d, top
	}
	return 0, top
}

// histogramDelta is the percentiles of the observations between two readings of a cumulative histogram,
// interpolated linearly within a bucket (ms).
func histogramDelta(a, b Histogram) Percentiles {
	if len(b.Bounds) == 0 || len(a.Counts) != len(b.Counts) && len(a.Counts) != 0 {
		return Percentiles{}
	}
	d := make([]float64, len(b.Counts))
	for i := range d {
		d[i] = b.Counts[i]
		if len(a.Counts) > 0 {
			d[i] -= a.Counts[i]
		}
	}
	total := d[len(d)-1]
	if total <= 0 {
		return Percentiles{}
	}
	q := func(p float64) float64 {
		target := p * total
		prevBound, prevCount := 0.0, 0.0
		for i, c := range d {
			if c >= target {
				if math.IsInf(b.Bounds[i], 1) || c == prevCount {
					return prevBound * 1000
				}
				return (prevBound + (b.Bounds[i]-prevBound)*(target-prevCount)/(c-prevCount)) * 1000
			}
			prevBound, prevCount = b.Bounds[i], c
		}
		return prevBound * 1000
	}
	return Percentiles{Count: int(total), P50: q(0.50), P95: q(0.95), P99: q(0.99)}
}

// SystemMeter reads CPU by process from /proc, the projector's metrics endpoint and the Neo4j transaction log.
type SystemMeter struct {
	Procs      map[string]int // process name -> pid; GeneratorProcess is added as this process
	MetricsURL string         // the projector's Prometheus endpoint ("": no projector counters)
	TxLogDir   string         // Neo4j's data/transactions/<database> ("": no transaction-log bytes)
	Client     *http.Client
}

var _ Meter = (*SystemMeter)(nil)

// Read takes one reading. CPU comes first, so the reading's own work (scraping, the log scan) lands in the
// generator's next interval, not in a process of the system.
func (m *SystemMeter) Read(ctx context.Context) (Reading, error) {
	r := Reading{At: time.Now(), CPU: map[string]float64{}, Projected: -1, TxLogBytes: -1}
	procs := map[string]int{GeneratorProcess: os.Getpid()}
	maps.Copy(procs, m.Procs)
	for name, pid := range procs {
		s, err := ProcCPUSeconds(pid)
		if err != nil {
			return r, err
		}
		r.CPU[name] = s
	}
	r.Load1 = loadAvg1()
	if m.TxLogDir != "" {
		b, err := TxLogPosition(m.TxLogDir)
		if err != nil {
			return r, err
		}
		r.TxLogBytes = b
	}
	if m.MetricsURL != "" {
		pm, err := ScrapeProjector(ctx, m.client(), m.MetricsURL, "")
		if err != nil {
			return r, err
		}
		r.Projected, r.Visible = pm.Projected, pm.Visible
	}
	return r, nil
}

func (m *SystemMeter) client() *http.Client {
	if m.Client != nil {
		return m.Client
	}
	return &http.Client{Timeout: 5 * time.Second}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat CPU times (100 on Linux everywhere that matters).
const clockTicks = 100

// ProcCPUSeconds is a process's user plus system CPU time from /proc/<pid>/stat.
func ProcCPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
	}
	// The command name (field 2) may contain spaces; fields after its closing parenthesis start at field 3.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("cpu of pid %d: unreadable stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("cpu of pid %d: short stat", pid)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64) // field 14
	stime, err2 := strconv.ParseFloat(f[12], 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cpu of pid %d: unreadable times", pid)
	}
	return (utime + stime) / clockTicks, nil
}

func loadAvg1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// txLogRotation is Neo4j's db.tx_log.rotation.size (its default, 256 MiB; the stack does not set it): log file
// N starts at about N × this many bytes of log written.
const txLogRotation = 256 << 20

// TxLogPosition is how many bytes of transaction log Neo4j has written, to within a rotation's overshoot: the
// highest log file's number × the rotation size, plus the end of the data in it (Neo4j preallocates the file, so
// the data ends where the zeros begin).
func TxLogPosition(dir string) (int64, error) {
	files, err := filepath.Glob(filepath.Join(dir, "neostore.transaction.db.*"))
	if err != nil || len(files) == 0 {
		return -1, fmt.Errorf("transaction log in %s: no neostore.transaction.db.* files", dir)
	}
	num := func(p string) int64 {
		n, _ := strconv.ParseInt(p[strings.LastIndexByte(p, '.')+1:], 10, 64)
		return n
	}
	sort.Slice(files, func(i, j int) bool { return num(files[i]) < num(files[j]) })
	last := files[len(files)-1]
	end, err := dataEnd(last)
	if err != nil {
		return -1, err
	}
	return num(last)*txLogRotation + end, nil
}

// dataEnd is the offset after the last non-zero byte of a preallocated file: a binary search for the first
// all-zero block (log entries carry headers and checksums, so a whole zero block inside the data does not
// occur), then a scan of the block before it.
func dataEnd(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }() // read-only
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	const block = 64 << 10
	buf := make([]byte, block)
	zero := func(i int64) (bool, error) {
		n, err := f.ReadAt(buf, i*block)
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		for _, c := range buf[:n] {
			if c != 0 {
				return false, nil
			}
		}
		return true, nil
	}
	blocks := (st.Size() + block - 1) / block
	lo, hi := int64(0), blocks // first all-zero block is in [lo, hi]
	for lo < hi {
		mid := (lo + hi) / 2
		z, err := zero(mid)
		if err != nil {
			return 0, err
		}
		if z {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo == 0 {
		return 0, nil
	}
	n, err := f.ReadAt(buf, (lo-1)*block)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	for n > 0 && buf[n-1] == 0 {
		n--
	}
	return (lo-1)*block + int64(n), nil
}

// ProjectorMetrics is what the benchmark reads from the projector's Prometheus endpoint.
type ProjectorMetrics struct {
	Projected int64 // headwater_consumer_events_total{outcome="projected"}
	Lag       int64 // sum of headwater_consumer_lag_messages over the topic's partitions (all topics when "")
	Visible   Histogram
}

// ScrapeProjector reads the projector's counters from a Prometheus text endpoint.
func ScrapeProjector(ctx context.Context, client *http.Client, url, topic string) (ProjectorMetrics, error) {
	pm := ProjectorMetrics{Projected: -1}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return pm, fmt.Errorf("metrics %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return pm, fmt.Errorf("metrics %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return pm, fmt.Errorf("metrics %s: status %d", url, resp.StatusCode)
	}
	// The counter appears with the first projected event: an endpoint that answers without it has projected none.
	pm.Projected = 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, labels, value, ok := labelledMetric(line)
		if !ok {
			continue
		}
		switch {
		case name == "headwater_consumer_events_total" && labels["outcome"] == "projected":
			pm.Projected = int64(value)
		case name == "headwater_consumer_lag_messages" && (topic == "" || labels["topic"] == topic):
			pm.Lag += int64(value)
		case name == "headwater_consumer_receive_to_visible_seconds_bucket":
			le, err := strconv.ParseFloat(labels["le"], 64)
			if err != nil {
				continue
			}
			pm.Visible.Bounds = append(pm.Visible.Bounds, le)
			pm.Visible.Counts = append(pm.Visible.Counts, value)
		}
	}
	return pm, sc.Err()
}

// labelledMetric splits a Prometheus text line `name{k="v",...} value` into its name, labels and value.
func labelledMetric(line string) (string, map[string]string, float64, bool) {
	if line == "" || line[0] == '#' {
		return "", nil, 0, false
	}
	sp := strings.LastIndexByte(line, ' ')
	if sp < 0 {
		return "", nil, 0, false
	}
	v, err := strconv.ParseFloat(line[sp+1:], 64)
	if err != nil {
		return "", nil, 0, false
	}
	head := line[:sp]
	labels := map[string]string{}
	name := head
	if i := strings.IndexByte(head, '{'); i >= 0 && strings.HasSuffix(head, "}") {
		name = head[:i]
		for kv := range strings.SplitSeq(head[i+1:len(head)-1], ",") {
			k, val, ok := strings.Cut(kv, "=")
			if ok {
				labels[k] = strings.Trim(val, `"`)
			}
		}
	}
	return name, labels, v, true
}

// ProjectorLag reads the consumer lag from the projector's own metric instead of polling Kafka.
type ProjectorLag struct {
	Client *http.Client
	URL    string
	Topic  string
}

var _ LagReader = (*ProjectorLag)(nil)

// Lag is the projector's last reported lag on the topic.
func (p *ProjectorLag) Lag(ctx context.Context) (int64, error) {
	pm, err := ScrapeProjector(ctx, p.Client, p.URL, p.Topic)
	return pm.Lag, err
}
