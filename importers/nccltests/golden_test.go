package nccltests

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/textdiff"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtures are the generated logs of the golden tests; each is written to
// testdata/<name>.log (for reading) and its model dump to <name>.golden.
var fixtures = map[string]func() string{
	// 2.17.8 layout, two hosts x 2 GPUs over IB with GDRDMA, INFO lines,
	// two collectives in one file, an INFO line glued mid-row.
	"modern-ib-2node": func() string {
		g := &gen{}
		hosts := []string{"node-a", "node-b"}
		g.infoBlock(hosts, 2, "IB", true, 1)
		g.run(runSpec{prog: "all_reduce_perf", version: "2.17.8", start: true, hosts: hosts, gpusPer: 2, gpu: "NVIDIA H100 80GB HBM3",
			minB: 1 << 20, maxB: 1 << 26, dtype: "float", redop: "sum", root: -1, peak: 180, lat: 20, infoInRow: true})
		g.run(runSpec{prog: "all_gather_perf", version: "2.17.8", start: true, hosts: hosts, gpusPer: 2, gpu: "NVIDIA H100 80GB HBM3",
			minB: 1 << 20, maxB: 1 << 24, dtype: "float", redop: "none", root: -1, peak: 150, lat: 15})
		return g.String()
	},
	// 2.9-era layout (error column, redop only) behind Open MPI
	// --tag-output prefixes, CRLF line ends, sockets, an INFO line between
	// the header and the first row.
	"old-mpitag-crlf-socket": func() string {
		g := &gen{prefix: "[1,0]<stdout>:", eol: "\r\n"}
		hosts := []string{"v100-a", "v100-b"}
		g.ln("+ mpirun -np 2 ./build/all_reduce_perf -b 8 -e 64K")
		g.infoBlock(hosts, 1, "Socket", false, -1)
		g.ln("")
		g.ln("v100-a:1000:1000 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]")
		g.run(runSpec{prog: "all_reduce_perf", hosts: hosts, gpusPer: 1, gpu: "Tesla V100-SXM2-32GB",
			minB: 8, maxB: 1 << 16, dtype: "float", redop: "sum", root: -1, peak: 2, lat: 60, oldFormat: true})
		return g.String()
	},
	// Damage: #wrong > 0 with FAILED footer, a truncated second run, a
	// test failure with its back-trace, hydra "[0] " prefixes.
	"failures-truncation-hydra": func() string {
		g := &gen{prefix: "[0] "}
		hosts := []string{"gpu-1"}
		g.run(runSpec{prog: "reduce_scatter_perf", version: "2.19.6", start: true, hosts: hosts, gpusPer: 4, gpu: "NVIDIA A100-SXM4-80GB",
			minB: 1 << 20, maxB: 1 << 23, dtype: "bfloat16", redop: "sum", root: -1, peak: 200, lat: 12, wrongAt: 1 << 22})
		g.run(runSpec{prog: "alltoall_perf", version: "2.19.6", start: true, hosts: hosts, gpusPer: 4, gpu: "NVIDIA A100-SXM4-80GB",
			minB: 1 << 20, maxB: 1 << 26, dtype: "float", redop: "none", root: -1, peak: 200, lat: 12, ipNA: true, stopAfter: 3})
		g.prefix = ""
		g.ln("gpu-1: Test NCCL failure common.cu:1204 'remote process exited or there was a network error / socket closed'")
		g.ln(" .. gpu-1 pid 1000: Test failure common.cu:915")
		return g.String()
	},
	// Independent single-rank processes (nccl-tests without MPI=1): every
	// header printed twice, interleaved, all claiming Rank 0.
	"duplicated-single-rank": func() string {
		g := &gen{}
		g.ln("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")
		g.ln("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")
		g.ln("#")
		g.ln("# Using devices")
		g.ln("#  Rank  0 Group  0 Pid   4001 on     host-a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3")
		g.ln("#  Rank  0 Group  0 Pid   5001 on     host-b device  0 [0000:1b:00] NVIDIA H100 80GB HBM3")
		g.ln("#")
		for i := 0; i < 2; i++ {
			g.ln("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ")
		}
		for _, sz := range []int64{1048576, 2097152} {
			for i := 0; i < 2; i++ {
				g.ln("%12d  %12d  %8s  %6s  %6d  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s", sz, sz/4, "float", "sum", -1, "10.00", fmtNum(float64(sz)/1e4, 6), "0.00", "0", "10.00", fmtNum(float64(sz)/1e4, 6), "0.00", "0")
			}
		}
		for i := 0; i < 2; i++ {
			g.ln("# Out of bounds values : 0 OK")
			g.ln("# Avg bus bandwidth    : 0 ")
		}
		return g.String()
	},
	// Rarer layouts: rccl-tests 2023 header with an in-place-only table,
	// v1-style header without '#', -I 1 per-iteration columns with -S 1
	// timestamps, hypercube's empty redop, overflowed and exponent numbers,
	// Slurm "0: " labels.
	"rare-layouts": func() string {
		g := &gen{}
		g.ln("# nThreads: 1 nGpus: 2 nRanks: 1 minBytes: 8 maxBytes: 16 step: 2(factor) warmupIters: 5 iters: 20 validation: 1 ")
		g.ln("rccl-tests: Version develop:abc1234")
		g.ln("#   Rank  0 Pid   7001 on     mi-box device  0 [0000:63:00.0] AMD Instinct MI300X")
		g.ln("#   Rank  1 Pid   7001 on     mi-box device  1 [0000:43:00.0] AMD Instinct MI300X")
		g.ln("#                                                   in-place")
		g.ln("#       size         count      type   redop    root     time   algbw   busbw  #wrong")
		g.ln("           8             2     float     sum      -1    10.00    0.00    0.00       0")
		g.ln("          16             4     float     sum      -1    10.00    0.00    0.00       0")
		g.ln("# Errors with asterisks indicate errors that have exceeded the maximum threshold.")
		g.ln("# Out of bounds values : 0 OK")
		g.ln("# Avg bus bandwidth    : 0 ")
		g.ln("")
		g.ln("0: nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 validation: 1")
		g.ln("0:   Rank  0 on oldbox device  0 [0x00] Tesla P100-SXM2-16GB")
		g.ln("0:   Rank  1 on oldbox device  1 [0x00] Tesla P100-SXM2-16GB")
		g.ln("0:        bytes             N    type      op     time  algbw  busbw      res")
		g.ln("0:         1024           256   float     sum    0.100  10.24  10.24    2e-07")
		g.ln("0:         2048           512   float     sum    0.200  10.24  10.24      N/A")
		g.ln("0:  Out of bounds values : 0 OK")
		g.ln("0:  Avg bus bandwidth    : 10.24 ")
		g.ln("# nccl-tests version 2.19.6 nccl-headers=23002 nccl-library=23002")
		g.ln("# Collective test starting: hypercube_perf")
		g.ln("# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0")
		g.ln("# Per-Iteration Report: CUDA event timing; i_* uses max over process rows")
		g.ln("#  Rank  0 Group  0 Pid   9001 on      hc-01 device  0 [0000:1b:00] NVIDIA B200")
		g.ln("#  Rank  1 Group  0 Pid   9002 on      hc-01 device  1 [0000:2b:00] NVIDIA B200")
		g.ln("#                                                              out-of-place (+ per-iteration)                       in-place (+ per-iteration)")
		g.ln("#       size         count      type   redop    root     time   algbw   busbw  #wrong   i_min   i_max   i_p99   i_cv%%     time   algbw   busbw  #wrong   i_min   i_max   i_p99   i_cv%%  timestamp")
		g.ln("        1024           256     float              -1     1.00    1.02    1.02       0    0.90    1.10    1.08    2.1     1.00    1.02    1.02       0    0.90    1.10    1.08    2.1  2026-07-09 10:11:12")
		g.ln("        2048           512     float              -1  1.2e+07  1715.44  5706839.35       0    0.90    1.10    1.08    2.1     1.00  6e+06  6e+06       0    0.90    1.10    1.08    2.1  2026-07-09 10:11:13")
		g.ln("# Out of bounds values : 0 OK")
		g.ln("# Avg bus bandwidth    : 3.42718e+06 ")
		g.ln("# Collective test concluded: hypercube_perf")
		return g.String()
	},
}

func TestGolden(t *testing.T) {
	for name, mk := range fixtures {
		t.Run(name, func(t *testing.T) {
			text := mk()
			tr, err := Parse(strings.NewReader(text), name+".log", importers.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := tr.Dump(&got); err != nil {
				t.Fatal(err)
			}
			logPath := filepath.Join("testdata", name+".log")
			goldPath := filepath.Join("testdata", name+".golden")
			if *update {
				os.MkdirAll("testdata", 0o755)
				if err := os.WriteFile(logPath, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(goldPath, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(goldPath)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("dump differs from %s (run with -update and review the diff)\n%s", goldPath, textdiff.First(string(want), got.String()))
			}
			for i, r := range tr.Bench.Runs {
				checkAvg(t, i, r)
			}
		})
	}
}

// TestFixtureFacts checks the hazards each fixture plants, so that a golden
// file regenerated with a bug in it does not go unnoticed.
func TestFixtureFacts(t *testing.T) {
	parse := func(name string) *model.Trace {
		tr, err := Parse(strings.NewReader(fixtures[name]()), name, importers.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	m := parse("modern-ib-2node")
	b := m.Bench
	if len(b.Runs) != 2 || b.Runs[0].Collective != "all_reduce" || b.Runs[1].Collective != "all_gather" {
		t.Fatalf("runs: %+v", b.Runs)
	}
	if r := b.Runs[0]; r.Ranks != 4 || r.Nodes != 2 || len(r.Rows) != 7 || r.TestsVersion != "2.17.8" || !r.Concluded {
		t.Errorf("all_reduce run: ranks=%d nodes=%d rows=%d version=%q concluded=%v", r.Ranks, r.Nodes, len(r.Rows), r.TestsVersion, r.Concluded)
	}
	if b.NCCL.Network != "IB" || b.NCCL.Version != "2.29.2+cuda12.9" || b.NCCL.NVLSSupport != 1 || b.NCCL.InitComplete != 4 {
		t.Errorf("nccl facts: %+v", b.NCCL)
	}
	if !m.Caps.Has(model.CapBenchmarks | model.CapTopology) {
		t.Errorf("caps %v", m.Caps)
	}
	o := parse("old-mpitag-crlf-socket")
	if r := o.Bench.Runs[0]; !r.ErrorColumn || r.Rows[0].OutOfPlace.MaxDelta != 5e-7 || r.Rows[0].OutOfPlace.Wrong != -1 || r.Program != "all_reduce_perf" {
		t.Errorf("old layout: %+v", r.Rows[0])
	}
	if !o.Bench.NCCL.NoIBVerbs || o.Bench.NCCL.Network != "Socket" {
		t.Errorf("old facts: %+v", o.Bench.NCCL)
	}
	f := parse("failures-truncation-hydra")
	if r := f.Bench.Runs[0]; !r.OOBFailed || r.Rows[2].OutOfPlace.Wrong != 16777200 {
		t.Errorf("wrong: oob=%v wrong=%d", r.OOBFailed, r.Rows[2].OutOfPlace.Wrong)
	}
	if r := f.Bench.Runs[1]; !r.Truncated || len(r.Rows) != 3 || r.Rows[0].InPlace.Wrong != -1 {
		t.Errorf("truncated run: %+v", r)
	}
	if len(f.Bench.Failures) != 2 || f.Bench.Failures[0].Run != 1 || f.Bench.Failures[0].Kind != "nccl" {
		t.Errorf("failures: %+v", f.Bench.Failures)
	}
	d := parse("duplicated-single-rank")
	if r := d.Bench.Runs[0]; len(d.Bench.Runs) != 1 || r.Processes != 2 || r.AvgLines != 2 || len(r.Devices) != 2 || r.Ranks != 1 {
		t.Errorf("duplicated: runs=%d %+v", len(d.Bench.Runs), r)
	}
	x := parse("rare-layouts")
	if len(x.Bench.Runs) != 3 {
		t.Fatalf("rare layouts: %d runs", len(x.Bench.Runs))
	}
	if r := x.Bench.Runs[0]; r.Rows[0].OutOfPlace.Present || !r.Rows[0].InPlace.Present || r.Ranks != 2 {
		t.Errorf("in-place only: %+v", r.Rows[0])
	}
	if r := x.Bench.Runs[1]; r.Ranks != 2 || len(r.Rows) != 2 || r.Rows[0].OutOfPlace.TimeUS != 100 || r.Rows[1].OutOfPlace.MaxDelta != -1 {
		t.Errorf("v1 layout: %+v", r)
	}
	if r := x.Bench.Runs[2]; r.Collective != "hypercube" || len(r.Rows) != 2 || r.Rows[1].OutOfPlace.BusBWGBps != 5706839.35 || r.Rows[1].InPlace.AlgBWGBps != 6e6 || r.Rows[1].OutOfPlace.TimeUS != 1.2e7 {
		t.Errorf("hypercube/per-iter: %+v", r.Rows)
	}
}

func TestErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":  "",
		"binary": "\x00\x01\x02SQLite",
		"prose":  "hello\nworld\n",
	} {
		_, err := Parse(strings.NewReader(in), name, importers.Options{})
		if err == nil || !importers.IsInputError(err) || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: want a positioned input error, got %v", name, err)
		}
	}
	// Cancellation is honoured.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	big := strings.Repeat("# Using devices\n", 70000)
	if _, err := parse(ctx, strings.NewReader(big), "big", importers.Options{}); err == nil {
		t.Error("cancelled parse returned no error")
	}
}

func TestSniff(t *testing.T) {
	imp := New()
	for name, mk := range fixtures {
		if s := imp.Sniff([]byte(mk())); s < 60 {
			t.Errorf("%s: sniff %d", name, s)
		}
	}
	tsv := "file\tcollective\tnotes\tpeak\n" +
		"a.log\tall_reduce_perf \tprints # Avg bus bandwidth and NCCL version 2.18; Test NCCL failure at 8 GB\t43.8\n"
	for _, s := range []string{`{"traceEvents": []}`, "SQLite format 3\x00", "just some text\n", tsv} {
		if v := imp.Sniff([]byte(s)); v != 0 {
			t.Errorf("sniff(%q) = %d, want 0", s, v)
		}
	}
}

func TestLongLine(t *testing.T) {
	long := "# " + strings.Repeat("x", maxKeep+100) + "\n"
	in := long + fixtures["modern-ib-2node"]()
	tr, err := Parse(strings.NewReader(in), "long", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Bench.Runs) != 2 || len(tr.Warnings) == 0 || !strings.Contains(tr.Warnings[0].Message, "longer than") || tr.Warnings[0].Position != "line 1" {
		t.Errorf("runs=%d warnings=%v", len(tr.Bench.Runs), tr.Warnings)
	}
}

// TestGluedRow: an INFO line printed by another thread between the two
// halves of a row, behind Hydra "[0] " prefixes, the "[0]" glued to the
// out-of-place #wrong.
func TestGluedRow(t *testing.T) {
	in := "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n" +
		"[0]         2048           512     float     sum      -1    74.00    0.03    0.05      0[0] h1:2:3 [0] NCCL INFO 2048 Bytes -> Algo 1 proto 2 time 3.0\n" +
		"[0]     73.09    0.03    0.05      0\n"
	tr, err := Parse(strings.NewReader(in), "glued", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := tr.Bench.Runs[0].Rows
	if len(rows) != 1 || rows[0].SizeBytes != 2048 || rows[0].OutOfPlace.Wrong != 0 || rows[0].InPlace.TimeUS != 73.09 || len(tr.Warnings) != 0 {
		t.Errorf("rows %+v warnings %v", rows, tr.Warnings)
	}
	if tr.Bench.NCCL.InfoLines != 1 {
		t.Errorf("info lines %d", tr.Bench.NCCL.InfoLines)
	}
}

// TestCutRow: a row cut short (an excerpt, a crash) followed by a complete
// row: the piece is dropped with a warning, the next row is kept.
func TestCutRow(t *testing.T) {
	in := "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n" +
		"        1024           256     float     sum      -1    10.00    0.10\n" +
		"        2048           512     float     sum      -1    10.00    0.20    0.20       0    10.00    0.20    0.20       0\n"
	tr, err := Parse(strings.NewReader(in), "cut", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := tr.Bench.Runs[0].Rows
	if len(rows) != 1 || rows[0].SizeBytes != 2048 || len(tr.Warnings) != 1 || tr.Warnings[0].Position != "line 2" {
		t.Errorf("rows %+v warnings %v", rows, tr.Warnings)
	}
}
