package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	big := filepath.Join(dir, "big.pt.trace.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"traceEvents":[`)
	if err := f.Truncate(5 << 29); err != nil { // sparse: no disk used
		t.Skip(err)
	}
	f.Close()
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
	for f, want := range map[string]string{db: "sqlite", js: "json", gz: "json", log: "", filepath.Join(dir, "none"): ""} {
		if got := inputKind(f); got != want {
			t.Errorf("inputKind(%s) = %q, want %q", filepath.Base(f), got, want)
		}
	}
	gib := float64(1 << 30)
	if got, want := memBudget([]string{gz}), int64(budgetJSON*gib); got != want {
		t.Errorf("budget of a 1 GiB gzipped trace %d, want %d", got, want)
	}
	if got := memBudget([]string{db, js, log}); got != budgetFloor {
		t.Errorf("budget of small inputs %d, want the floor %d", got, budgetFloor)
	}
	m := memLimit{Bytes: 100, Source: "ulimit -v"}
	if err := m.checkFits([]string{gz}); exitCode(err) != exitOutput {
		t.Errorf("checkFits: %v (exit %d)", err, exitCode(err))
	}
}
