package batch

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRerunSkipsOwnOutputs: `batch d --out d/out` run again and again must
// not read its own reports, state and dataset (it grew 2 → 8 → 26 → 80
// inputs), nor files tracedx wrote elsewhere in the folder (a report, a
// Perfetto export); a file given by name is always kept.
func TestRerunSkipsOwnOutputs(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 6, 0)
	report := filepath.Join(root, "report.json")
	os.WriteFile(report, []byte("{\n  \"schema_version\": \"1\",\n  \"tool\": {\n    \"name\": \"tracedx\",\n"), 0o644)
	perfetto := []byte(`{"displayTimeUnit":"ns","otherData":{"tool":"tracedx","schema":"tracedx.perfetto/v1"},"traceEvents":[`)
	os.WriteFile(filepath.Join(root, "timeline.json"), perfetto, 0o644)
	// The same export gzipped (export -o NAME.json.gz): a Kineto importer
	// would take it for a gzipped trace.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(perfetto)
	zw.Close()
	os.WriteFile(filepath.Join(root, "timeline.json.gz"), gz.Bytes(), 0o644)
	out := filepath.Join(root, "out")
	all := func(string) bool { return true } // every file looks like a trace
	var counts []int
	for range 3 {
		items, err := Expand([]string{root}, nil, all, OutputDirs(out)...)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(items))
		cfg := testConfig(t, out)
		cfg.Items = items
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	if counts[0] != 7 || counts[1] != counts[0] || counts[2] != counts[0] { // 6 traces + README.md
		t.Errorf("inputs per run: %v, want 7 each time", counts)
	}
	if items, _ := Expand([]string{root, report}, nil, all); len(items) != 8 {
		t.Errorf("a tracedx file given by name: %d inputs, want 8", len(items))
	}
	// An output folder from before the marker existed is skipped by name.
	os.Remove(filepath.Join(out, OutputMarker))
	if items, _ := Expand([]string{root}, nil, all, OutputDirs(out)...); len(items) != 7 {
		t.Errorf("without markers: %d inputs, want 7", len(items))
	}
}

// TestUnreadableFileInFolder: a file of an input folder that cannot be
// opened is an input error, not silently skipped. (As root every file
// opens, so the case cannot be made and is skipped.)
func TestUnreadableFileInFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: chmod 000 does not stop root from reading")
	}
	dir := t.TempDir()
	root := makeInputs(t, dir, 3, 0)
	locked := filepath.Join(root, "job00", "locked.txt")
	os.WriteFile(locked, []byte("FAKE idle=1\n"), 0o000)
	items, err := Expand([]string{root}, nil, fakeDetect)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.Path == locked {
			if it.Err == nil {
				t.Errorf("%s listed without its error", it.Name)
			}
			return
		}
	}
	t.Errorf("%s not listed: %v", locked, items)
}

// TestFullDiskSummary: when reports cannot be written (here a folder sits
// where a report goes; a full disk behaves the same) the batch stops, and
// the summary counts only inputs whose reports were written.
func TestFullDiskSummary(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 4, 0)
	out := filepath.Join(dir, "out")
	cfg := testConfig(t, out, root)
	cfg.Jobs = 1
	blocked := cfg.Items[1]
	os.MkdirAll(filepath.Join(out, "reports", blocked.Safe+".md", "x"), 0o755)
	sum, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("no error with an unwritable report")
	}
	var buf bytes.Buffer
	WriteSummary(&buf, sum)
	text := buf.String()
	if !strings.Contains(text, blocked.Name) || !strings.Contains(text, "not written") {
		t.Errorf("summary does not name the report not written:\n%s", text)
	}
	written := 0
	for _, r := range sum.Results {
		if r.Status != "" {
			written++
		}
	}
	if written == len(sum.Results) {
		t.Errorf("every input counted as done:\n%s", text)
	}
}
