// Package machine describes the host a load-test result was measured on (cores, memory, CPU model), so every
// result file says what it ran on.
package machine

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Info is written into every result.
type Info struct {
	Hostname      string `json:"hostname"`
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	Cores         int    `json:"cores"`
	CPUModel      string `json:"cpuModel"`
	MemTotalBytes int64  `json:"memTotalBytes"`
	GoVersion     string `json:"goVersion"`
}

// Describe reads /proc/cpuinfo and /proc/meminfo where they exist (fields stay empty elsewhere).
func Describe() Info {
	host, _ := os.Hostname()
	return Info{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Cores: runtime.NumCPU(),
		CPUModel: procField("/proc/cpuinfo", "model name"), MemTotalBytes: memTotal(), GoVersion: runtime.Version()}
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// memTotal parses "MemTotal: 24684092 kB".
func memTotal() int64 {
	v := strings.Fields(procField("/proc/meminfo", "MemTotal"))
	if len(v) == 0 {
		return 0
	}
	kb, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}
