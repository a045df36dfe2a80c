package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// underUlimit runs tracedx (this test binary as main) under ulimit -v KB.
func underUlimit(t *testing.T, kb string, env []string, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	script := `ulimit -v "$1" || exit 99; shift; exec "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, "sh", kb, exe}, args...)...)
	cmd.Env = append(append(os.Environ(), "TRACEDX_AS_MAIN=1"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code == 99 {
		t.Skip("ulimit -v is not available")
	}
	return code, stderr.String()
}

// TestMemoryLimit: under ulimit -v an input that cannot fit is refused
// before reading with one line and exit 3 (it died with a Go runtime dump);
// a small one still works; the soft limit follows ulimit -v, and
// GOMEMLIMIT wins when set.
func TestMemoryLimit(t *testing.T) {
	needImporters(t)
	dir := t.TempDir()
	big := sparseTrace(t, dir, 5<<29)
	small := filepath.Join(dir, "small.pt.trace.json")
	writeKinetoTrace(t, small, 10, 30, false)

	for _, cmd := range [][]string{{"analyze", big}, {"info", big}, {"export", big, "--to", "perfetto", "-o", filepath.Join(dir, "x.json")}} {
		code, stderr := underUlimit(t, "2000000", nil, cmd...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != exitOutput || len(lines) != 1 || !strings.Contains(stderr, "above the ulimit -v of") || strings.Contains(stderr, "goroutine") {
			t.Errorf("%s under ulimit -v: exit %d, stderr:\n%s", cmd[0], code, stderr)
		}
	}
	code, stderr := underUlimit(t, "2000000", nil, "analyze", small, "--verbose", "-o", filepath.Join(dir, "r.md"))
	if code != 0 || !strings.Contains(stderr, "memory: ulimit -v of 1.9 GiB; collector's soft limit 977 MiB") {
		t.Errorf("small input under ulimit -v: exit %d\n%s", code, stderr)
	}
	code, stderr = underUlimit(t, "unlimited", []string{"GOMEMLIMIT=300MiB"}, "version", "--verbose")
	if code != 0 || !strings.Contains(stderr, "soft limit 300 MiB GOMEMLIMIT") {
		t.Errorf("GOMEMLIMIT: exit %d\n%s", code, stderr)
	}
	// In a batch, the input that cannot fit is that input's error.
	code, stderr = underUlimit(t, "2000000", nil, "batch", big, small, "--out", filepath.Join(dir, "out"), "-q", "--jobs", "1")
	if code != exitInput || !strings.Contains(stderr, "1 of 2 inputs could not be read") {
		t.Errorf("batch under ulimit -v: exit %d\n%s", code, stderr)
	}
}

func TestInputFootprint(t *testing.T) {
	dir := t.TempDir()
	gz := filepath.Join(dir, "t.json.gz")
	// A gzip member whose trailer says 1 GiB uncompressed.
	data := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}, make([]byte, 10)...)
	data = append(data, 0, 0, 0, 0x40)
	os.WriteFile(gz, data, 0o644)
	if got := inputFootprint(gz); got != 1<<30 {
		t.Errorf("gzip footprint %d, want 1 GiB", got)
	}
	if got := inputFootprint(filepath.Join(dir, "none")); got != 0 {
		t.Errorf("missing file footprint %d", got)
	}
	// Budgets: a share of the (uncompressed) size by format, a floor for
	// logs and small files.
	db := filepath.Join(dir, "t.sqlite")
	os.WriteFile(db, append([]byte("SQLite format 3\x00"), make([]byte, 1<<20)...), 0o644)
	js := filepath.Join(dir, "t.json")
	os.WriteFile(js, []byte("\n  {\"traceEvents\": []}"), 0o644)
	log := filepath.Join(dir, "t.log")
	os.WriteFile(log, []byte("# nThread 1 nGpus 8"), 0o644)
	jsgz := filepath.Join(dir, "kineto.json.gz")
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(`{"traceEvents": []}`))
	zw.Close()
	os.WriteFile(jsgz, zb.Bytes(), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]float64{db: budgetSQLite, js: budgetJSON, jsgz: budgetJSON, log: 0, fifo: 0, filepath.Join(dir, "none"): 0} {
		if got := budgetShare(f); got != want {
			t.Errorf("budgetShare(%s) = %v, want %v", filepath.Base(f), got, want)
		}
	}
	gib := float64(1 << 30)
	if got, want := memBudget([]string{sparseTrace(t, dir, 1<<30)}), int64(budgetJSON*gib); got != want {
		t.Errorf("budget of a 1 GiB trace %d, want %d", got, want)
	}
	if got := memBudget([]string{db, js, log}); got != budgetFloor {
		t.Errorf("budget of small inputs %d, want the floor %d", got, budgetFloor)
	}
	m := memLimit{Bytes: 100, Source: "ulimit -v"}
	if err := m.checkFits([]string{gz}); exitCode(err) != exitOutput {
		t.Errorf("checkFits: %v (exit %d)", err, exitCode(err))
	}
}

// TestMaxMemory: --max-memory takes sizes with units, refuses an input
// whose least need is above it before reading (exit 3, one line naming the
// file), and stops a run whose live data go above it with the same kind of
// error and no output file.
func TestMaxMemory(t *testing.T) {
	needImporters(t)
	var s byteSize
	for in, want := range map[string]int64{"4GiB": 4 << 30, "500MB": 500e6, "0": 0, "1.5G": 1.5e9, "100 mib": 100 << 20, "2T": 2e12} {
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, int64(s), err, want)
		}
	}
	for _, in := range []string{"", "x", "1x", "-1G", "12 parsecs", "1MB", "1e30"} {
		if err := s.Set(in); err == nil {
			t.Errorf("Set(%q) accepted: %d", in, int64(s))
		}
	}
	dir := t.TempDir()
	big := sparseTrace(t, dir, 1<<30)
	var stdout, stderr bytes.Buffer
	code := run([]string{"analyze", big, "--max-memory", "256MiB", "-q"}, &stdout, &stderr)
	if code != exitOutput || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), big+": needs at least "+humanSize(memBudget([]string{big}))+" of memory, above --max-memory 256 MiB") {
		t.Errorf("input above --max-memory: exit %d\n%s", code, stderr.String())
	}
	// A trace whose data (some 100 MB live) outgrow a 64 MiB maximum.
	mid := filepath.Join(dir, "mid.pt.trace.json")
	writeKinetoTrace(t, mid, 200000, 30, false)
	out := filepath.Join(dir, "r.json")
	stderr.Reset()
	code = run([]string{"analyze", mid, "--max-memory", "64MiB", "-q", "--format", "json", "-o", out}, &stdout, &stderr)
	if code != exitOutput || !strings.Contains(stderr.String(), mid+": the trace's data took ") || !strings.Contains(stderr.String(), "above --max-memory 64 MiB") {
		t.Errorf("live data above --max-memory: exit %d\n%s", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output was written")
	}
	stderr.Reset()
	if code = run([]string{"analyze", mid, "--max-memory", "4GiB", "-q", "--format", "json", "-o", out}, &stdout, &stderr); code > 1 {
		t.Errorf("within --max-memory: exit %d\n%s", code, stderr.String())
	}
}

// sparseTrace writes a Kineto trace of size bytes that uses no disk: its
// head, then a hole.
func sparseTrace(t *testing.T, dir string, size int64) string {
	t.Helper()
	big := filepath.Join(dir, "big.pt.trace.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(`{"traceEvents":[`)
	if err := f.Truncate(size); err != nil {
		t.Skip(err)
	}
	return big
}
