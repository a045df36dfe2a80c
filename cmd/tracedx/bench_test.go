package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/model"
)

// benchInput makes (once) a large Kineto trace: a real corpus trace
// replicated with shifted timestamps and ids to TRACEDX_BENCH_MB megabytes
// (default 200). TRACEDX_BENCH_DIR keeps the files between runs, e.g. to time
// the built binary with /usr/bin/time -v on the same input.
func benchInput(b *testing.B, gz bool) string {
	b.Helper()
	mb := int64(200)
	if v, err := strconv.ParseInt(os.Getenv("TRACEDX_BENCH_MB"), 10, 64); err == nil && v > 0 {
		mb = v
	}
	dir := os.Getenv("TRACEDX_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	plain := filepath.Join(dir, "analyze-"+strconv.FormatInt(mb, 10)+"MB.pt.trace.json")
	if _, err := os.Stat(plain); err != nil {
		src := filepath.Join(corpus.Dir(b, "corpus/kineto"), "hta-nccl-parser-config-rank0.json.gz")
		if err := kinetogen.Replicate(src, plain, mb<<20); err != nil {
			b.Fatal(err)
		}
	}
	if !gz {
		return plain
	}
	if _, err := os.Stat(plain + ".gz"); err != nil {
		if err := kinetogen.GzipFile(plain, plain+".gz"); err != nil {
			b.Fatal(err)
		}
	}
	return plain + ".gz"
}

func benchAnalyze(b *testing.B, path string) {
	if _, err := os.Stat(path); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(inputFootprint(path)) // uncompressed, as the budget counts it
	b.ReportAllocs()
	if out := os.Getenv("TRACEDX_PEAK_HEAP"); out != "" {
		defer watchPeakHeap(b, out)()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code := run([]string{"analyze", path, "--format", "json"}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}

// BenchmarkAnalyze is `tracedx analyze --format json` end to end: import,
// breakdown, every detector and the report, on plain JSON. MB/s is of
// uncompressed JSON.
func BenchmarkAnalyze(b *testing.B) { benchAnalyze(b, benchInput(b, false)) }

// BenchmarkAnalyzeGzip is the same on the gzipped file (MB/s of the JSON inside).
func BenchmarkAnalyzeGzip(b *testing.B) { benchAnalyze(b, benchInput(b, true)) }

// BenchmarkAnalyzeFile analyzes the file TRACEDX_BENCH_FILE (skipped when
// unset), e.g. a synthetic Nsight export or a 1 GB nccl-tests log, to take
// heap profiles of the whole analyze (docs/performance.md).
func BenchmarkAnalyzeFile(b *testing.B) {
	path := os.Getenv("TRACEDX_BENCH_FILE")
	if path == "" {
		b.Skip("TRACEDX_BENCH_FILE not set")
	}
	benchAnalyze(b, path)
}

// BenchmarkPeakRSS runs `tracedx analyze --format json` in a process of its
// own on TRACEDX_BENCH_FILE (default: the replicated Kineto trace of
// BenchmarkAnalyze) and reports its peak resident memory, as a share of
// the (uncompressed) input and of the budget for that kind of
// input: 0.5x a JSON trace, 1.5x an Nsight export, 200 MB for logs.
// RSS/budget above 1 is over budget. Compare runs with benchstat.
func BenchmarkPeakRSS(b *testing.B) {
	path := os.Getenv("TRACEDX_BENCH_FILE")
	if path == "" {
		path = benchInput(b, false)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	size := inputFootprint(path)
	budget := 200e6
	switch detectFormat(path) {
	case model.FormatKineto:
		budget = 0.5 * float64(size)
	case model.FormatNsys:
		budget = 1.5 * float64(size)
	}
	var peak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(exe, "analyze", "--format", "json", path)
		cmd.Env = append(os.Environ(), "TRACEDX_AS_MAIN=1")
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() > 1 { // 1: findings at the gate
				b.Fatalf("%v", err)
			}
		}
		ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if !ok {
			b.Skip("no rusage on this system")
		}
		peak = max(peak, ru.Maxrss*1024) // KiB on Linux
	}
	b.ReportMetric(float64(peak)/1e6, "peak-RSS-MB")
	b.ReportMetric(float64(peak)/float64(size), "RSS/input")
	b.ReportMetric(float64(peak)/budget, "RSS/budget")
}
