package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tracedx/tracedx/export/parquet/parquettest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tracedx/tracedx/export/parquet"
	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

// Fake inputs: text files "FAKE idle=<pct> err=<n> warn=<n> kernels=<n> sleep=<ms>";
// "BAD" files fail to analyse; other files are not traces (skipped in folders).

func fakeDetect(path string) bool {
	data, err := os.ReadFile(path)
	return err == nil && (bytes.HasPrefix(data, []byte("FAKE")) || bytes.HasPrefix(data, []byte("BAD")))
}

func fakeAnalyze(ctx context.Context, path string) (*model.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte("FAKE")) {
		return nil, fmt.Errorf("%s: byte 0: unrecognised input format", path)
	}
	kv := map[string]int{}
	for _, f := range strings.Fields(string(data))[1:] {
		k, v, _ := strings.Cut(f, "=")
		kv[k], _ = strconv.Atoi(v)
	}
	if ms := kv["sleep"]; ms > 0 {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if kv["panic"] > 0 {
		panic("boom")
	}
	span := model.Duration(100e6)
	idle := span * model.Duration(kv["idle"]) / 100
	r := &model.Report{
		Inputs:  []model.Input{{Path: path, Format: "fake", Rank: kv["rank"]}},
		Devices: []model.DeviceSummary{{Rank: kv["rank"], Device: 0, Span: span, Busy: span - idle, Idle: idle, Compute: span - idle, Kernels: int64(kv["kernels"])}},
	}
	for i := 0; i < kv["kernels"]; i++ {
		r.Kernels = append(r.Kernels, model.KernelSummary{Name: fmt.Sprintf("kernel_%d", i%7), Count: 1, Total: model.Duration(1000 * (i + 1))})
	}
	for i := 0; i < kv["err"]; i++ {
		r.Findings = append(r.Findings, model.Finding{Rule: "kernel-gap", Severity: model.SevError, Layer: "scheduling", Title: "gap", Message: fmt.Sprintf("idle %d%%", kv["idle"]), Confidence: model.Measured,
			Metrics: []model.Metric{{Name: "idle_pct", Value: float64(kv["idle"])}}, Evidence: []model.Evidence{{Rank: kv["rank"], Device: 0, Stream: 7, Thread: -1, Start: 10, End: 20}}})
	}
	for i := 0; i < kv["warn"]; i++ {
		r.Findings = append(r.Findings, model.Finding{Rule: "sync-api", Severity: model.SevWarning, Layer: "scheduling", Title: "sync", Message: "syncs", Confidence: model.Inferred})
	}
	return r, nil
}

func fakeRender(w io.Writer, r *model.Report, format string) error {
	_, err := fmt.Fprintf(w, "%s report of %s: %d findings\n", format, r.Inputs[0].Path, len(r.Findings))
	return err
}

// makeInputs writes n fake inputs under dir/traces (some bad, some not traces).
func makeInputs(t testing.TB, dir string, n, sleepMS int) string {
	root := filepath.Join(dir, "traces")
	for i := 0; i < n; i++ {
		sub := filepath.Join(root, fmt.Sprintf("job%02d", i%4))
		os.MkdirAll(sub, 0o755)
		content := fmt.Sprintf("FAKE idle=%d err=%d warn=%d kernels=%d rank=%d sleep=%d\n", (i*7)%50, i%3, i%2, i%9, i%4, sleepMS)
		if i%10 == 9 {
			content = "BAD\n"
		}
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("trace%03d.txt", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "README.md"), []byte("not a trace\n"), 0o644)
	os.MkdirAll(filepath.Join(root, ".hidden"), 0o755)
	os.WriteFile(filepath.Join(root, ".hidden", "x.txt"), []byte("FAKE idle=1\n"), 0o644)
	return root
}

func testConfig(t testing.TB, out string, args ...string) Config {
	items, err := Expand(args, nil, fakeDetect)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Parse("p.yaml", []byte("gates:\n  - metric: gpu.idle_pct\n    max: 40\n"))
	if err != nil {
		t.Fatal(err)
	}
	return Config{Items: items, Out: out, Jobs: 3, Policy: pol, FailOn: model.SevError + 1, Rules: []string{"kernel-gap", "sync-api"},
		Fingerprint: "test-1", Analyze: fakeAnalyze, Render: fakeRender}
}

// datasetText reads every dataset table of dir as sorted lines per table.
func datasetText(t testing.TB, out string) map[string][]string {
	t.Helper()
	res := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(out, "dataset", "*.parquet"))
	for _, f := range files {
		table := strings.SplitN(filepath.Base(f), "-", 2)[0]
		table = strings.TrimSuffix(table, ".parquet")
		lines, err := parquettest.ReadText(f, nil)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		res[table] = append(res[table], lines...)
	}
	for k := range res {
		sort.Strings(res[k])
	}
	return res
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 12, 0)
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte("# inputs\ntraces/job00/trace000.txt\n\ntraces/job01\nmissing.txt\n"), 0o644)
	items, err := Expand([]string{root, "@" + list, filepath.Join(root, "README.md")}, nil, fakeDetect)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	errs := 0
	for _, it := range items {
		names = append(names, strings.TrimPrefix(it.Name, filepath.ToSlash(dir)+"/"))
		if it.Err != nil {
			errs++
		}
	}
	// 12 fake files + README given explicitly + missing.txt
	if len(items) != 14 || errs != 1 {
		t.Errorf("items (%d, %d errors) = %v", len(items), errs, names)
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("not sorted: %v", names)
	}
	for _, it := range items {
		if strings.Contains(it.Safe, "/") || strings.HasPrefix(it.Safe, ".") {
			t.Errorf("unsafe name %q", it.Safe)
		}
	}
	if _, err := Expand([]string{"@" + filepath.Join(dir, "nope.txt")}, nil, nil); err == nil {
		t.Error("missing manifest accepted")
	}
}

func TestSafeNameCollisions(t *testing.T) {
	items := []Item{{Name: "a/b.json"}, {Name: "a__b.json"}, {Name: "c.json"}, {Name: "../x/C.JSON"}}
	assignSafeNames(items)
	seen := map[string]bool{}
	for _, it := range items {
		if seen[strings.ToLower(it.Safe)] {
			t.Errorf("duplicate safe name %q", it.Safe)
		}
		seen[strings.ToLower(it.Safe)] = true
	}
	if items[2].Safe != "c.json" {
		t.Errorf("c.json → %q", items[2].Safe)
	}
}

func TestShard(t *testing.T) {
	for _, tc := range []struct {
		s    string
		i, n int
		ok   bool
	}{{"0/3", 0, 3, true}, {"2/3", 2, 3, true}, {"3/3", 0, 0, false}, {"1/0", 0, 0, false}, {"a/b", 0, 0, false}, {"1/3x", 0, 0, false}, {"", 0, 1, true}} {
		i, n, err := ParseShard(tc.s)
		if (err == nil) != tc.ok || tc.ok && (i != tc.i || n != tc.n) {
			t.Errorf("ParseShard(%q) = %d, %d, %v", tc.s, i, n, err)
		}
	}
	counts := make([]int, 3)
	for i := 0; i < 300; i++ {
		counts[ShardOf(fmt.Sprintf("traces/job%d/rank0.json", i), 3)]++
	}
	for s, c := range counts {
		if c < 70 {
			t.Errorf("shard %d has %d of 300 inputs", s, c)
		}
	}
}

func TestRunAndResume(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 20, 0)
	out := filepath.Join(dir, "out")
	cfg := testConfig(t, out, root)
	var progress bytes.Buffer
	cfg.Progress = &progress
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Results) != 20 {
		t.Fatalf("%d results", len(sum.Results))
	}
	bad := sum.Count(func(r *Result) bool { return r.Status == parquet.StatusError })
	gateFailed := sum.Count(func(r *Result) bool { return r.GatesFailed > 0 })
	if bad != 2 || gateFailed == 0 {
		t.Errorf("bad=%d gateFailed=%d", bad, gateFailed)
	}
	if got := strings.Count(progress.String(), "\n"); got != 20 || !strings.Contains(progress.String(), "batch: [20/20]") {
		t.Errorf("progress lines = %d:\n%s", got, progress.String())
	}
	reports, _ := filepath.Glob(filepath.Join(out, "reports", "*"))
	if len(reports) != 36 {
		t.Errorf("%d report files, want 36", len(reports))
	}
	ds := datasetText(t, out)
	if len(ds["inputs"]) != 20 || len(ds["findings"]) == 0 || len(ds["kernels"]) == 0 || len(ds["metrics"]) == 0 {
		t.Errorf("dataset sizes: inputs %d findings %d kernels %d metrics %d", len(ds["inputs"]), len(ds["findings"]), len(ds["kernels"]), len(ds["metrics"]))
	}
	errRows := 0
	for _, l := range ds["inputs"] {
		if strings.Contains(l, "|status=error|error=") && strings.Contains(l, "unrecognised input format") {
			errRows++
		}
	}
	if errRows != 2 {
		t.Errorf("%d error rows:\n%s", errRows, strings.Join(ds["inputs"], "\n"))
	}
	junitXML, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil || !bytes.Contains(junitXML, []byte(`tests="`)) {
		t.Errorf("junit.xml: %v", err)
	}
	var sumText bytes.Buffer
	WriteSummary(&sumText, sum)
	if !strings.Contains(sumText.String(), "20 inputs: ") || !strings.Contains(sumText.String(), "2 unreadable; 0 done earlier") {
		t.Errorf("summary:\n%s", sumText.String())
	}
	firstDataset := readAll(t, filepath.Join(out, "dataset"))

	// A rerun does nothing again and writes the same dataset, byte for byte.
	var calls atomic.Int64
	cfg.Analyze = func(ctx context.Context, p string) (*model.Report, error) { calls.Add(1); return fakeAnalyze(ctx, p) }
	cfg.Progress = nil
	sum2, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || sum2.Count(func(r *Result) bool { return r.Resumed }) != 20 {
		t.Errorf("rerun analysed %d inputs", calls.Load())
	}
	if sum2.Count(func(r *Result) bool { return r.GatesFailed > 0 }) != gateFailed {
		t.Error("resumed results lost their gate outcome")
	}
	if got := readAll(t, filepath.Join(out, "dataset")); !equalFiles(got, firstDataset) {
		t.Error("dataset changed on a rerun")
	}

	// Changing an input redoes exactly that input.
	changed := filepath.Join(root, "job00", "trace004.txt")
	os.WriteFile(changed, []byte("FAKE idle=3 err=0 warn=0 kernels=1\n"), 0o644)
	calls.Store(0)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("after one change, %d inputs analysed", calls.Load())
	}
	// A new fingerprint (e.g. another policy) redoes everything.
	cfg.Fingerprint = "test-2"
	calls.Store(0)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 20 {
		t.Errorf("new fingerprint: %d inputs analysed, want 20", calls.Load())
	}
}

func readAll(t testing.TB, dir string) map[string][]byte {
	m := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = b
	}
	return m
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func TestHalfWrittenState(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 12, 0)
	clean := filepath.Join(dir, "clean")
	if _, err := Run(context.Background(), testConfig(t, clean, root)); err != nil {
		t.Fatal(err)
	}
	want := datasetText(t, clean)

	out := filepath.Join(dir, "out")
	cfg := testConfig(t, out, root)
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	// Simulate a run killed at every stage of different inputs.
	st := filepath.Join(out, "state")
	it0, it1, it2, it3 := cfg.Items[0], cfg.Items[1], cfg.Items[2], cfg.Items[3]
	os.Remove(filepath.Join(st, it0.Safe+".json"))                                        // reports and rows written, state not
	os.WriteFile(filepath.Join(st, it1.Safe+".rows.json"), []byte(`{"Rows":{"In`), 0o644) // torn rows file (not atomic writer)
	os.Remove(filepath.Join(out, "reports", it2.Safe+".md"))                              // a report missing
	os.WriteFile(filepath.Join(st, it3.Safe+".json"), []byte("{}"), 0o644)                // empty state
	for _, f := range []string{
		filepath.Join(out, "reports", "."+it0.Safe+".md.tmp-123"),
		filepath.Join(st, "."+it1.Safe+".rows.json.tmp-9"),
		filepath.Join(out, "dataset", ".findings.parquet.tmp-77"),
	} {
		os.WriteFile(f, []byte("half"), 0o644)
	}
	os.WriteFile(filepath.Join(out, "dataset", "findings.parquet"), []byte("PAR1 torn"), 0o644)

	var calls atomic.Int64
	cfg.Analyze = func(ctx context.Context, p string) (*model.Report, error) { calls.Add(1); return fakeAnalyze(ctx, p) }
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 4 {
		t.Errorf("%d inputs redone, want 4", calls.Load())
	}
	if got := datasetText(t, out); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dataset after resume differs from a clean run")
	}
	for _, d := range []string{"reports", "state", "dataset"} {
		tmp, _ := filepath.Glob(filepath.Join(out, d, ".*tmp-*"))
		if len(tmp) != 0 {
			t.Errorf("temporary files left: %v", tmp)
		}
	}
}

func TestShardsEqualSingleRun(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 30, 0)
	single := filepath.Join(dir, "single")
	if _, err := Run(context.Background(), testConfig(t, single, root)); err != nil {
		t.Fatal(err)
	}
	sharded := filepath.Join(dir, "sharded")
	n := 0
	for i := 0; i < 3; i++ {
		cfg := testConfig(t, sharded, root)
		cfg.Shard, cfg.Shards = i, 3
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		n += len(sum.Results)
		if len(sum.Results) == 0 {
			t.Errorf("shard %d is empty", i)
		}
	}
	if n != 30 {
		t.Errorf("shards processed %d inputs, want 30", n)
	}
	if _, err := os.Stat(filepath.Join(sharded, "dataset", "inputs-shard-2-of-3.parquet")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(sharded, "junit-shard-1-of-3.xml")); err != nil {
		t.Error(err)
	}
	a, b := datasetText(t, single), datasetText(t, sharded)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("sharded union differs from the single run:\n%v\n%v", a["inputs"], b["inputs"])
	}
}

func TestDeterministicAcrossJobs(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 16, 0)
	var outs []map[string][]byte
	for _, jobs := range []int{1, 4} {
		out := filepath.Join(dir, fmt.Sprint("out", jobs))
		cfg := testConfig(t, out, root)
		cfg.Jobs = jobs
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, readAll(t, filepath.Join(out, "dataset")))
	}
	if !equalFiles(outs[0], outs[1]) {
		t.Error("dataset bytes depend on --jobs")
	}
}

func TestPanicIsInputError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p.txt")
	os.WriteFile(p, []byte("FAKE panic=1\n"), 0o644)
	cfg := testConfig(t, filepath.Join(dir, "out"), p, filepath.Join(dir, "missing.txt"))
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r := sum.Results[1]; r.Status != parquet.StatusError || !strings.Contains(r.Error, "internal error: boom") {
		t.Errorf("result = %+v", r)
	}
	if r := sum.Results[0]; r.Status != parquet.StatusError || !strings.Contains(r.Error, "no such file") {
		t.Errorf("result = %+v", r)
	}
	// Again: the analysed input is resumed from its record, the missing
	// one (no digest) is tried again; both stay errors.
	sum, err = Run(context.Background(), cfg)
	if err != nil || !sum.Results[1].Resumed || sum.Results[0].Resumed ||
		sum.Count(func(r *Result) bool { return r.Status == parquet.StatusError }) != 2 {
		t.Errorf("rerun: %v %+v", err, sum.Results)
	}
}

func TestRenderFailureIsInputError(t *testing.T) {
	dir := t.TempDir()
	root := makeInputs(t, dir, 4, 0)
	cfg := testConfig(t, filepath.Join(dir, "out"), root)
	cfg.Render = func(w io.Writer, r *model.Report, format string) error {
		if format == "json" && strings.HasSuffix(r.Inputs[0].Path, "trace001.txt") {
			return errors.New("cannot encode NaN")
		}
		if strings.HasSuffix(r.Inputs[0].Path, "trace002.txt") {
			panic("renderer bug")
		}
		return fakeRender(w, r, format)
	}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	for _, r := range sum.Results {
		if r.Status == parquet.StatusError {
			errs = append(errs, r.Error)
		}
	}
	if len(errs) != 2 || !strings.Contains(errs[0], "rendering the json report: cannot encode NaN") || !strings.Contains(errs[1], "internal error: renderer bug") {
		t.Errorf("errors = %q", errs)
	}
	if md, _ := filepath.Glob(filepath.Join(dir, "out", "reports", "*trace001*")); len(md) != 0 {
		t.Errorf("reports of a failed input left: %v", md)
	}
}

func TestTTYProgress(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := newProgress(&buf, true, 4, func() time.Time { now = now.Add(time.Second); return now })
	for i := 0; i < 4; i++ {
		p.start(fmt.Sprintf("trace%d.json", i))
		r := &Result{Item: Item{Name: fmt.Sprintf("trace%d.json", i)}, Status: parquet.StatusOK}
		if i == 1 {
			r.Status, r.Error = parquet.StatusError, "trace1.json: line 3: bad"
		}
		p.done(r)
	}
	p.finish()
	s := buf.String()
	if !strings.Contains(s, "\r[") || !strings.Contains(s, "4/4") || !strings.Contains(s, "/s ETA ") || !strings.Contains(s, "4/4 0.5/s in 0:08") ||
		!strings.Contains(s, "\r\x1b[Kbatch: error trace1.json: trace1.json: line 3: bad\n") || !strings.Contains(s, "trace3.json") || !strings.HasSuffix(s, "\n") {
		t.Errorf("tty progress = %q", s)
	}
}

// The kill test: a child process (this test binary) runs a slow batch and
// is killed with SIGKILL mid-way; a rerun completes it and the outputs equal
// a clean run's.
func TestMain(m *testing.M) {
	if os.Getenv("TRACEDX_BATCH_CHILD") != "" {
		args := []string{os.Getenv("TRACEDX_BATCH_CHILD"), os.Getenv("TRACEDX_BATCH_CHILD_IN")}
		items, err := Expand(args[1:], nil, fakeDetect)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		pol, _ := policy.Parse("p.yaml", []byte("gates:\n  - metric: gpu.idle_pct\n    max: 40\n"))
		_, err = Run(context.Background(), Config{Items: items, Out: args[0], Jobs: 2, Policy: pol, FailOn: model.SevError + 1,
			Rules: []string{"kernel-gap", "sync-api"}, Fingerprint: "test-1", Analyze: fakeAnalyze, Render: fakeRender, Progress: os.Stderr})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestKilledRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	dir := t.TempDir()
	root := makeInputs(t, dir, 24, 80) // 24 inputs × 80 ms over 2 workers ≈ 1 s
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TRACEDX_BATCH_CHILD="+out, "TRACEDX_BATCH_CHILD_IN="+root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once some, but not all, inputs are done.
	deadline := time.Now().Add(10 * time.Second)
	for {
		states, _ := filepath.Glob(filepath.Join(out, "state", "*.rows.json"))
		if len(states) >= 6 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("child made no progress: %s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child was not killed (err %v); raise the sleep", err)
	}
	done, _ := filepath.Glob(filepath.Join(out, "state", "*.rows.json"))
	if len(done) >= 24 {
		t.Fatalf("child finished before the kill")
	}
	if _, err := os.Stat(filepath.Join(out, "dataset", "inputs.parquet")); err == nil {
		t.Fatal("dataset written before the end")
	}

	cfg := testConfig(t, out, root)
	var calls atomic.Int64
	cfg.Analyze = func(ctx context.Context, p string) (*model.Report, error) { calls.Add(1); return fakeAnalyze(ctx, p) }
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	resumed := sum.Count(func(r *Result) bool { return r.Resumed })
	if resumed == 0 || calls.Load() == 0 || resumed+int(calls.Load()) < 24 {
		t.Errorf("resumed %d, analysed %d of 24", resumed, calls.Load())
	}
	t.Logf("killed after %d inputs; rerun resumed %d and analysed %d", len(done), resumed, calls.Load())

	clean := filepath.Join(dir, "clean")
	if _, err := Run(context.Background(), testConfig(t, clean, root)); err != nil {
		t.Fatal(err)
	}
	if a, b := datasetText(t, clean), datasetText(t, out); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Error("dataset after kill + resume differs from a clean run")
	}
	for _, d := range []string{"reports", "state", "dataset"} {
		tmp, _ := filepath.Glob(filepath.Join(out, d, ".*tmp-*"))
		if len(tmp) != 0 {
			t.Errorf("temporary files left: %v", tmp)
		}
	}
	a, _ := filepath.Glob(filepath.Join(clean, "reports", "*"))
	b, _ := filepath.Glob(filepath.Join(out, "reports", "*"))
	if len(a) != len(b) {
		t.Errorf("reports: %d after resume, %d clean", len(b), len(a))
	}
}
