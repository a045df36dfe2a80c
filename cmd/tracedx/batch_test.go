package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/tracedx/tracedx/export/parquet/parquettest"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	impall "github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/model"
)

// needImporters skips (fails under CI=true) while the Kineto and nccl-tests
// importers are not registered.
func needImporters(t testing.TB) {
	t.Helper()
	reg := impall.Registry()
	for _, f := range []string{"kineto", "nccl-tests"} {
		if _, ok := reg.ByFormat(f); !ok {
			if os.Getenv("CI") == "true" {
				t.Fatalf("importer %s is not registered in importers/all", f)
			}
			t.Skipf("importer %s is not registered in importers/all yet", f)
		}
	}
}

// kinetoTrace writes a small Kineto trace: nk kernels on GPU 0 separated by
// gaps of gapUS µs, launched from one Python thread.
func writeKinetoTrace(t testing.TB, path string, nk int, gapUS float64, gz bool) {
	b := fixture.New(path, model.FormatKineto)
	th := b.Thread(1, "python")
	names := []string{"ampere_sgemm_128x64_tn", "void at::native::vectorized_elementwise_kernel<4>", "flash_fwd_kernel"}
	ts := 1000.0
	for k := 0; k < nk; k++ {
		dur := 20.0 + float64(k%5)*10
		b.Kernel(0, 7, names[k%len(names)], ts, ts+dur, th, ts-8)
		ts += dur + gapUS
	}
	if err := kinetogen.WriteFile(path, b.Build(), kinetogen.Layout{Gzip: gz}); err != nil {
		t.Fatal(err)
	}
}

// ncclLog writes a small nccl-tests all_reduce log with the given peak bus
// bandwidth (GB/s) on 8 ranks.
func writeNCCLLog(t testing.TB, path string, peak float64) {
	var b strings.Builder
	b.WriteString("# nccl-tests version 2.17.6 nccl-headers=22902 nccl-library=22902\n")
	b.WriteString("# Collective test starting: all_reduce_perf\n")
	b.WriteString("# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
	for r := 0; r < 8; r++ {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on     node-a device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", r, 1000+r, r, 0x10+r*16)
	}
	b.WriteString("#\n#                                                              out-of-place                       in-place          \n")
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n")
	b.WriteString("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n")
	var sum float64
	n := 0
	for size := int64(1024); size <= 1<<20; size *= 2 {
		tm := 10 + float64(size)/(peak/1.75*1e3)
		alg := float64(size) / tm / 1e3
		bus := alg * 1.75
		fmt.Fprintf(&b, "%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6s  %7.2f  %6.2f  %6.2f  %6s\n",
			size, size/4, "float", "sum", -1, tm, alg, bus, "0", tm, alg, bus, "0")
		sum += 2 * float64(int(bus*100+0.5)) / 100
		n += 2
	}
	fmt.Fprintf(&b, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.4g \n#\n# Collective test concluded: all_reduce_perf\n", sum/float64(n))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// genInputs writes n Kineto traces (every 4th gzipped; gaps growing with
// the index so that idle shares differ), two nccl-tests logs, a README (not
// a trace) and, when broken, a truncated trace.
func genBatchInputs(t testing.TB, root string, n int, broken bool) {
	for i := 0; i < n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("job%02d", i%5))
		os.MkdirAll(dir, 0o755)
		name := fmt.Sprintf("rank%d.pt.trace.json", i)
		if i%4 == 3 {
			name += ".gz"
		}
		writeKinetoTrace(t, filepath.Join(dir, name), 40+i%13, float64(5+(i*11)%60), i%4 == 3)
	}
	os.MkdirAll(filepath.Join(root, "nccl"), 0o755)
	writeNCCLLog(t, filepath.Join(root, "nccl", "allreduce-a.log"), 180)
	writeNCCLLog(t, filepath.Join(root, "nccl", "allreduce-b.log"), 90)
	os.WriteFile(filepath.Join(root, "README.txt"), []byte("these are test traces\n"), 0o644)
	if broken {
		os.WriteFile(filepath.Join(root, "job00", "broken.pt.trace.json"), []byte(`{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1`), 0o644)
	}
}

var (
	buildOnce sync.Once
	buildBin  string
	buildErr  error
)

// binary builds ./cmd/tracedx once per test process.
func tracedxBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tracedx-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildBin = filepath.Join(dir, "tracedx")
		out, err := exec.Command("go", "build", "-o", buildBin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

type binResult struct {
	code           int
	stdout, stderr string
}

func runBin(t testing.TB, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(tracedxBinary(t), args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return binResult{code, so.String(), se.String()}
}

// datasetText reads every table of out/dataset (all shards) as sorted lines.
func batchDatasetText(t testing.TB, out string) map[string][]string {
	t.Helper()
	res := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(out, "dataset", "*.parquet"))
	for _, f := range files {
		table := strings.TrimSuffix(strings.SplitN(filepath.Base(f), "-", 2)[0], ".parquet")
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

func writePolicy(t testing.TB, path, text string) string {
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBatchCommand(t *testing.T) {
	needImporters(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(buildBin)) })
	traces := filepath.Join(dir, "traces")
	genBatchInputs(t, traces, 24, false)
	lenient := writePolicy(t, filepath.Join(dir, "lenient.yaml"), "gates:\n  - metric: gpu.idle_pct\n    max: 99\n    optional: true\n  - metric: nccl.all_reduce.peak_busbw_gbps\n    min: 10\n    optional: true\n")
	strict := writePolicy(t, filepath.Join(dir, "strict.yaml"), "gates:\n  - metric: gpu.idle_pct\n    max: 30\n    optional: true\n  - metric: nccl.all_reduce.peak_busbw_gbps\n    min: 150\n    optional: true\n")

	t.Run("exit0", func(t *testing.T) {
		out := filepath.Join(dir, "out0")
		r := runBin(t, "batch", traces, "--out", out, "--policy", lenient, "--jobs", "2")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "26 inputs: 26 ok, 0 failed a gate, 0 unreadable; 0 done earlier") {
			t.Errorf("summary:\n%s", r.stdout)
		}
		if strings.Contains(r.stderr, "\r") || !strings.Contains(r.stderr, "batch: [26/26]") {
			t.Errorf("non-TTY progress should be plain lines:\n%s", r.stderr)
		}
		md, _ := filepath.Glob(filepath.Join(out, "reports", "*.md"))
		js, _ := filepath.Glob(filepath.Join(out, "reports", "*.json"))
		if len(md) != 26 || len(js) != 26 {
			t.Errorf("%d md and %d json reports, want 26 each", len(md), len(js))
		}
		ds := batchDatasetText(t, out)
		formats := map[string]int{}
		for _, l := range ds["inputs"] {
			for _, f := range strings.Split(l, "|") {
				if strings.HasPrefix(f, "format=") {
					formats[f]++
				}
			}
		}
		if len(ds["inputs"]) != 26 || formats["format=kineto"] != 24 || formats["format=nccl-tests"] != 2 {
			t.Errorf("inputs table: %d rows, formats %v", len(ds["inputs"]), formats)
		}
		if len(ds["kernels"]) == 0 || len(ds["metrics"]) == 0 {
			t.Errorf("kernels %d, metrics %d rows", len(ds["kernels"]), len(ds["metrics"]))
		}
		peaks := 0
		for _, l := range ds["metrics"] {
			if strings.Contains(l, "metric=nccl.all_reduce.peak_busbw_gbps|") {
				peaks++
			}
		}
		if peaks != 2 {
			t.Errorf("%d nccl peak rows, want 2", peaks)
		}
		// A rerun does nothing again.
		r = runBin(t, "batch", traces, "--out", out, "--policy", lenient, "--jobs", "2")
		if r.code != 0 || !strings.Contains(r.stdout, "26 done earlier") {
			t.Errorf("rerun: exit %d\n%s", r.code, r.stdout)
		}
	})

	t.Run("exit1-gate", func(t *testing.T) {
		out := filepath.Join(dir, "out1")
		r := runBin(t, "batch", traces, "--out", out, "--policy", strict)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "allreduce-b.log") || !strings.Contains(r.stderr, "failed a gate") {
			t.Errorf("the slow nccl log should fail its gate:\n%s\n%s", r.stdout, r.stderr)
		}
		junitXML, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
		if !bytes.Contains(junitXML, []byte("nccl.all_reduce.peak_busbw_gbps = ")) || !bytes.Contains(junitXML, []byte(`<testsuite name="`)) {
			t.Errorf("junit.xml lacks the gate failure")
		}
	})

	t.Run("exit2-unreadable", func(t *testing.T) {
		bad := filepath.Join(dir, "bad")
		genBatchInputs(t, bad, 3, true)
		out := filepath.Join(dir, "out2")
		r := runBin(t, "batch", bad, filepath.Join(dir, "missing.json"), "--out", out)
		if r.code != 2 {
			t.Fatalf("exit %d, want 2\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "2 unreadable") || !strings.Contains(r.stdout, "broken.pt.trace.json") {
			t.Errorf("summary:\n%s", r.stdout)
		}
		ds := batchDatasetText(t, out)
		ok, failed := 0, 0
		for _, l := range ds["inputs"] {
			if strings.Contains(l, "|status=ok|") {
				ok++
			}
			if strings.Contains(l, "|status=error|") && !strings.Contains(l, "|error=<null>|") {
				failed++
			}
		}
		if ok != 5 || failed != 2 {
			t.Errorf("inputs: %d ok, %d errors:\n%s", ok, failed, strings.Join(ds["inputs"], "\n"))
		}
	})

	t.Run("exit2-usage", func(t *testing.T) {
		badPolicy := writePolicy(t, filepath.Join(dir, "badpolicy.yaml"), "gates:\n  - metric: gpu.idle_pct\n    maxx: 3\n")
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"batch", traces, "--out", filepath.Join(dir, "u"), "--policy", badPolicy}, "badpolicy.yaml:3: unknown key \"maxx\""},
			{[]string{"batch", traces}, "--out DIR is required"},
			{[]string{"batch", traces, "--out", filepath.Join(dir, "u"), "--shard", "3/3"}, "want 0 <= i < n"},
			{[]string{"batch", "--out", filepath.Join(dir, "u")}, "missing INPUTS"},
			{[]string{"batch", "@" + filepath.Join(dir, "nolist.txt"), "--out", filepath.Join(dir, "u")}, "nolist.txt"},
		} {
			r := runBin(t, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args[1:], r.code, r.stderr, tc.want)
			}
		}
	})

	t.Run("manifest", func(t *testing.T) {
		list := filepath.Join(dir, "list.txt")
		os.WriteFile(list, []byte("# two traces and a folder\ntraces/job00/rank0.pt.trace.json\ntraces/job01/rank1.pt.trace.json\ntraces/nccl\n"), 0o644)
		out := filepath.Join(dir, "outm")
		r := runBin(t, "batch", "@"+list, "--out", out)
		if r.code != 0 || !strings.Contains(r.stdout, "4 inputs: 4 ok") {
			t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("killed-and-resumed", func(t *testing.T) {
		many := filepath.Join(dir, "many")
		genBatchInputs(t, many, 80, false)
		out := filepath.Join(dir, "outk")
		cmd := exec.Command(tracedxBinary(t), "batch", many, "--out", out, "--jobs", "1")
		var se bytes.Buffer
		cmd.Stderr = &se
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			done, _ := filepath.Glob(filepath.Join(out, "state", "*.rows.json"))
			if len(done) >= 5 || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// Done inputs are those with a state file (written last); a rows
		// file without one is an input killed half-way.
		all, _ := filepath.Glob(filepath.Join(out, "state", "*.json"))
		rows, _ := filepath.Glob(filepath.Join(out, "state", "*.rows.json"))
		done := len(all) - len(rows)
		if done == 0 || done >= 82 {
			t.Fatalf("killed with %d of 82 inputs done; the test needs a mid-way kill", done)
		}
		if _, err := os.Stat(filepath.Join(out, "dataset", "inputs.parquet")); err == nil {
			t.Fatal("dataset exists before the batch finished")
		}
		r := runBin(t, "batch", many, "--out", out, "--jobs", "2")
		if r.code != 0 {
			t.Fatalf("resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("%d done earlier", done)) {
			t.Errorf("resume after %d done:\n%s", done, r.stdout)
		}
		t.Logf("killed after %d of 82 inputs; resumed", done)
		clean := filepath.Join(dir, "outk-clean")
		if r := runBin(t, "batch", many, "--out", clean, "--jobs", "2"); r.code != 0 {
			t.Fatalf("clean run: exit %d", r.code)
		}
		if a, b := batchDatasetText(t, clean), batchDatasetText(t, out); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Error("dataset after kill + resume differs from a clean run")
		}
		for _, sub := range []string{"reports", "state", "dataset"} {
			tmp, _ := filepath.Glob(filepath.Join(out, sub, ".*tmp-*"))
			if len(tmp) != 0 {
				t.Errorf("temporary files left: %v", tmp)
			}
			a, _ := filepath.Glob(filepath.Join(clean, sub, "*"))
			b, _ := filepath.Glob(filepath.Join(out, sub, "*"))
			if len(a) != len(b) {
				t.Errorf("%s: %d files after resume, %d after a clean run", sub, len(b), len(a))
			}
		}
		// Reports are byte-identical too.
		ra, _ := filepath.Glob(filepath.Join(clean, "reports", "*"))
		for _, p := range ra {
			a, _ := os.ReadFile(p)
			b, _ := os.ReadFile(filepath.Join(out, "reports", filepath.Base(p)))
			if !bytes.Equal(a, b) {
				t.Errorf("report %s differs after resume", filepath.Base(p))
				break
			}
		}
	})

	t.Run("shards", func(t *testing.T) {
		single := filepath.Join(dir, "out0") // from exit0 (same inputs, lenient policy)
		if _, err := os.Stat(single); err != nil {
			t.Skip("needs exit0")
		}
		sharded := filepath.Join(dir, "outs")
		var wg sync.WaitGroup
		results := make([]binResult, 3)
		for i := 0; i < 3; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				results[i] = runBin(t, "batch", traces, "--out", sharded, "--policy", lenient, "--jobs", "1", "--shard", fmt.Sprintf("%d/3", i))
			}(i)
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 {
				t.Fatalf("shard %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, fmt.Sprintf("(shard %d/3 of 26 inputs)", i)) {
				t.Errorf("shard %d summary:\n%s", i, r.stdout)
			}
		}
		for _, f := range []string{"inputs-shard-0-of-3.parquet", "findings-shard-1-of-3.parquet", "kernels-shard-2-of-3.parquet"} {
			if _, err := os.Stat(filepath.Join(sharded, "dataset", f)); err != nil {
				t.Error(err)
			}
		}
		if a, b := batchDatasetText(t, single), batchDatasetText(t, sharded); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("union of 3 shards differs from the single run (%d vs %d inputs)", len(b["inputs"]), len(a["inputs"]))
		}
	})
}

// BenchmarkBatch measures end-to-end batch throughput (import, detectors,
// md+json reports, dataset) over small generated Kineto traces, --jobs 2.
func BenchmarkBatch(b *testing.B) {
	b.Run("fsync", func(b *testing.B) { benchBatch(b) })
	b.Run("nofsync", func(b *testing.B) { benchBatch(b, "--fsync=false") })
}

func benchBatch(b *testing.B, extra ...string) {
	needImporters(b)
	dir := b.TempDir()
	traces := filepath.Join(dir, "traces")
	const n = 200
	genBatchInputs(b, traces, n-2, false) // + 2 nccl-tests logs
	var bytesIn int64
	filepath.Walk(traces, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			bytesIn += fi.Size()
		}
		return nil
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, fmt.Sprint("out", i))
		code := run(append([]string{"batch", traces, "--out", out, "--jobs", "2"}, extra...), io.Discard, io.Discard)
		if code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.StopTimer()
	b.SetBytes(bytesIn)
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "traces/s")
}

// TestBatchReportFormat: --report-format html writes a self-contained page
// per input; adding it to a finished batch writes only what is missing;
// an unknown format is a usage error.
func TestBatchReportFormat(t *testing.T) {
	needImporters(t)
	if testing.Short() {
		t.Skip("runs the command in processes of its own")
	}
	dir := t.TempDir()
	// The test binary runs as tracedx (TestMain): no build, no shared binary.
	runBin := func(t *testing.T, args ...string) binResult {
		t.Helper()
		cmd := tracedxCmd(t, dir, args...)
		var so, se bytes.Buffer
		cmd.Stdout, cmd.Stderr = &so, &se
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return binResult{cmd.ProcessState.ExitCode(), so.String(), se.String()}
	}
	traces := filepath.Join(dir, "traces")
	genBatchInputs(t, traces, 2, false)
	out := filepath.Join(dir, "out")
	count := func(ext string) int {
		m, _ := filepath.Glob(filepath.Join(out, "reports", "*."+ext))
		return len(m)
	}
	if r := runBin(t, "batch", traces, "--out", out, "--jobs", "1"); r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if count("md") != 4 || count("json") != 4 || count("html") != 0 {
		t.Fatalf("default formats: %d md, %d json, %d html; want 4, 4, 0", count("md"), count("json"), count("html"))
	}
	r := runBin(t, "batch", traces, "--out", out, "--jobs", "1", "--report-format", "md, json,HTML,html")
	if r.code != 0 || !strings.Contains(r.stdout, "0 done earlier") {
		t.Fatalf("adding html should redo the inputs lacking it: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	pages, _ := filepath.Glob(filepath.Join(out, "reports", "*.html"))
	if len(pages) != 4 {
		t.Fatalf("%d html reports, want 4", len(pages))
	}
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		if !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) || !bytes.Contains(b, []byte(`<svg class="plot"`)) {
			t.Errorf("%s is not an HTML report with plots", p)
		}
	}
	if r := runBin(t, "batch", traces, "--out", out, "--report-format", "md,pdf"); r.code != 2 || !strings.Contains(r.stderr, `--report-format "md,pdf"`) {
		t.Errorf("unknown format: exit %d, stderr %s", r.code, r.stderr)
	}
}
