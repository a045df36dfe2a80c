package memcpy

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/internal/detectortest"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

const (
	kib = 1 << 10
	mib = 1 << 20
)

// start returns a fixture on an H100 with five 10 ms ProfilerSteps on the
// main thread, so that the steady state is [10 ms, 50 ms): 40 ms of wall
// time (warm-up is step 1).
func start(path string, f model.Format) (*fixture.B, model.ThreadID) {
	b := fixture.New(path, f).Device(0, "NVIDIA H100 80GB HBM3")
	th := b.Thread(1, "python")
	for k := 0; k < 5; k++ {
		s := float64(k) * 10000
		b.Step(th, k+1, s, s+10000)
		b.Kernel(0, 7, "gemm", s+100, s+2000, th, s+50)
	}
	return b, th
}

// at returns µs offset off into steady step k (1..4).
func at(k int, off float64) float64 { return float64(k)*10000 + off }

type wantFinding struct {
	title   string
	sev     model.Severity
	conf    model.Confidence
	metrics map[string]float64 // exact values
	msg     string             // substring of the message
	ev      int                // evidence entries
}

var cases = []struct {
	name    string
	build   func() *model.Trace
	want    []wantFinding // one per title
	notMeas string
}{
	{
		// Planted: a synchronous 8 MiB cudaMemcpy per steady step, blocking
		// 600 µs each (2.4 ms = 6% of 40 ms); the warm-up one is skipped.
		name: "sync-copies",
		build: func() *model.Trace {
			b, th := start("sync.sqlite", model.FormatNsys)
			b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 8*mib, 3000, 3200, th, "cudaMemcpy_v3020", 2900, 5000)
			for k := 1; k < 5; k++ {
				b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 8*mib, at(k, 3100), at(k, 3300), th, "cudaMemcpy_v3020", at(k, 3000), at(k, 3600))
			}
			return b.Build()
		},
		want: []wantFinding{{title: "Synchronous memory copies", sev: model.SevWarning, conf: model.Measured, ev: 4,
			metrics: map[string]float64{"sync_copies": 4, "blocked_time": 2400e3, "copy_time": 800e3, "bytes": 32 * mib},
			msg:     "4 synchronous copies (cudaMemcpy) in the steady state (steps 2 to 5 of 5) block the host for 2.40ms, 6% of 40.00ms"}},
	},
	{
		// A synchronous copy whose call began in warm-up (at 5 ms) counts
		// only its steady part: 10..14 ms, 4 ms = 10% of 40 ms.
		name: "sync-copy-clipped-to-steady-state",
		build: func() *model.Trace {
			b, th := start("clip.json", model.FormatKineto)
			b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 8*mib, 13000, 13200, th, "cudaMemcpy", 5000, 14000)
			return b.Build()
		},
		want: []wantFinding{{title: "Synchronous memory copies", sev: model.SevWarning, conf: model.Measured, ev: 1,
			metrics: map[string]float64{"sync_copies": 1, "blocked_time": 4000e3, "blocked_share": 10}}},
	},
	{
		// Planted: cudaMemcpyAsync from pageable memory, 4 MiB, 1 ms per
		// copy and 1.01 ms per call: cost 4.04 ms = 10.1%.
		name: "pageable-async",
		build: func() *model.Trace {
			b, th := start("pageable.json", model.FormatKineto)
			for k := 1; k < 5; k++ {
				b.Copy(0, 7, model.MemHtoD, model.MemPageable, model.MemDevice, 4*mib, at(k, 3005), at(k, 4005), th, "cudaMemcpyAsync", at(k, 3000), at(k, 4010))
			}
			return b.Build()
		},
		want: []wantFinding{{title: "Copies from or to pageable host memory", sev: model.SevWarning, conf: model.Measured, ev: 4,
			metrics: map[string]float64{"pageable_copies": 4, "copy_time": 4000e3, "call_time": 4040e3, "bytes": 16 * mib},
			msg:     "10.1% of 40.00ms wall time, moving 16 MiB"}},
	},
	{
		// Planted: 40 copies of 256 B per steady step (160), 2 µs on the GPU
		// and 6 µs in the call each: cost 960 µs = 2.4% → info.
		name: "tiny-copies",
		build: func() *model.Trace {
			b, th := start("tiny.json", model.FormatKineto)
			for k := 1; k < 5; k++ {
				for i := 0; i < 40; i++ {
					s := at(k, 3000+float64(i)*20)
					b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 256, s+3, s+5, th, "cudaMemcpyAsync", s, s+6)
				}
			}
			return b.Build()
		},
		want: []wantFinding{{title: "Many tiny memory copies", sev: model.SevInfo, conf: model.Measured, ev: 5,
			metrics: map[string]float64{"small_copies": 160, "copy_time": 320e3, "call_time": 960e3, "bytes": 160 * 256},
			msg:     "160 copies under 64 KiB in the steady state (steps 2 to 5 of 5) (40 per step)"}},
	},
	{
		// 100 pinned and 60 pageable tiny copies: the pageable ones are
		// reported as pageable (60 × 6 µs = 0.9%), and the tiny-copy cost
		// counts only the other 100 (600 µs = 1.5%).
		name: "tiny-mixed-with-pageable",
		build: func() *model.Trace {
			b, th := start("tinymixed.json", model.FormatKineto)
			for k := 1; k < 5; k++ {
				for i := 0; i < 40; i++ {
					s := at(k, 3000+float64(i)*20)
					src := model.MemPinned
					if i%8 >= 5 {
						src = model.MemPageable
					}
					b.Copy(0, 7, model.MemHtoD, src, model.MemDevice, 256, s+3, s+5, th, "cudaMemcpyAsync", s, s+6)
				}
			}
			return b.Build()
		},
		want: []wantFinding{
			{title: "Many tiny memory copies", sev: model.SevInfo, conf: model.Measured, ev: 5,
				metrics: map[string]float64{"small_copies": 160, "small_copies_sync_or_pageable": 60, "call_time": 600e3, "bytes": 160 * 256},
				msg:     "60 of them are synchronous or pageable and reported as such, the other 100 cost 600.0µs"},
			{title: "Copies from or to pageable host memory", sev: model.SevInfo, conf: model.Measured, ev: 5,
				metrics: map[string]float64{"pageable_copies": 60, "call_time": 360e3}},
		},
	},
	{
		// Planted: pinned 64 MiB HtoD copies at ~8.4 GB/s on an H100 (Gen5,
		// ~50 GB/s expected); device copies at 1342 GB/s are fine (80% of
		// half of 3350 GB/s).
		name: "low-bandwidth",
		build: func() *model.Trace {
			b, th := start("bw.sqlite", model.FormatNsys)
			for k := 1; k < 5; k++ {
				b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 64*mib, at(k, 2000), at(k, 10000), th, "cudaMemcpyAsync_v3020", at(k, 1990), at(k, 2000))
				b.Copy(0, 7, model.MemDtoD, model.MemDevice, model.MemDevice, 256*mib, at(k, 1000), at(k, 1200), th, "cudaMemcpyAsync_v3020", at(k, 990), at(k, 1000))
			}
			return b.Build()
		},
		want: []wantFinding{{title: "Memory copies below expected bandwidth", sev: model.SevInfo, conf: model.Estimated, ev: 4,
			metrics: map[string]float64{"copies": 4, "expected_bandwidth": 50},
			msg:     "4 HtoD copies of at least 1 MiB on device 0 reach 8.39 GB/s in the steady state (steps 2 to 5 of 5), 16.78% of the ~50 GB/s expected from the practical host link bandwidth of this GPU"}},
	},
	{
		// GPU-only capture: pageable copies are still found; synchronous
		// copies are not measurable.
		name: "gpu-only-pageable",
		build: func() *model.Trace {
			b := fixture.New("gpuonly.json", model.FormatKineto).ClearCaps()
			for i := 0; i < 10; i++ {
				s := float64(i) * 10000
				b.Kernel(0, 7, "gemm", s, s+5000, model.NoThread, 0)
				b.Copy(0, 7, model.MemDtoH, model.MemDevice, model.MemPageable, 2*mib, s+6000, s+7000, model.NoThread, "", 0, 0)
			}
			return b.Build()
		},
		// Span [0, 97 ms); steady from 9.7 ms: 9 copies of 1 ms over 87.3 ms.
		want: []wantFinding{{title: "Copies from or to pageable host memory", sev: model.SevWarning, conf: model.Measured, ev: 5,
			metrics: map[string]float64{"pageable_copies": 9, "copy_time": 9000e3, "call_time": 0}}},
		notMeas: "synchronous copies: the capture has no API calls",
	},
	{
		// Clean: pinned async copies at 40 GB/s, a fast device copy, a few
		// small copies, a 4 KiB synchronous HtoD (returns early: not
		// counted), and pageable copies only in warm-up.
		name: "clean",
		build: func() *model.Trace {
			b, th := start("clean.sqlite", model.FormatNsys)
			b.Copy(0, 7, model.MemHtoD, model.MemPageable, model.MemDevice, 512*mib, 2500, 9000, th, "cudaMemcpy_v3020", 2400, 9100)
			for k := 1; k < 5; k++ {
				b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 8*mib, at(k, 3000), at(k, 3210), th, "cudaMemcpyAsync_v3020", at(k, 2990), at(k, 3000))
				b.Copy(0, 7, model.MemDtoD, model.MemDevice, model.MemDevice, 256*mib, at(k, 1000), at(k, 1200), th, "cudaMemcpyAsync_v3020", at(k, 990), at(k, 1000))
				b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 4*kib, at(k, 5000), at(k, 5002), th, "cudaMemcpy_v3020", at(k, 4995), at(k, 5004))
				b.Copy(0, 7, model.MemDtoH, model.MemDevice, model.MemPinned, 4, at(k, 6000), at(k, 6002), th, "cudaMemcpyAsync_v3020", at(k, 5995), at(k, 6001))
			}
			return b.Build()
		},
	},
	{
		// An unknown GPU is held to PCIe Gen3 (12 GB/s): 8.4 GB/s is 70%, quiet.
		name: "unknown-gpu-gen3",
		build: func() *model.Trace {
			b, th := start("gen3.sqlite", model.FormatNsys)
			b.T.Devices[0].Name = "Mystery Accelerator"
			for k := 1; k < 5; k++ {
				b.Copy(0, 7, model.MemHtoD, model.MemPinned, model.MemDevice, 64*mib, at(k, 2000), at(k, 10000), th, "cudaMemcpyAsync_v3020", at(k, 1990), at(k, 2000))
			}
			return b.Build()
		},
	},
	{
		name: "cpu-only-not-measurable",
		build: func() *model.Trace {
			b := fixture.New("cpu.json", model.FormatKineto).ClearCaps()
			th := b.Thread(1, "python")
			b.Range(th, model.RangeCPUOp, "aten::add", 0, 10)
			return b.Build()
		},
		notMeas: "no GPU activity",
	},
}

// TestMemcpyFindsPlanted runs the fixtures with a planted fault.
func TestMemcpyFindsPlanted(t *testing.T) { runCases(t, detectortest.Planted) }

// TestMemcpyQuietOnClean runs the clean fixtures: no finding.
func TestMemcpyQuietOnClean(t *testing.T) { runCases(t, detectortest.Clean) }

// TestMemcpyNotMeasurable runs the fixtures that lack the rule's inputs.
func TestMemcpyNotMeasurable(t *testing.T) { runCases(t, detectortest.NotMeasurable) }

func runCases(t *testing.T, kind string) {
	cs := make([]detectortest.Case, len(cases))
	for i, c := range cases {
		cs[i] = detectortest.Case{Name: c.name, Build: c.build, NotMeasurable: c.notMeas, Findings: len(c.want)}
	}
	detectortest.RunCases(t, Detector, kind, cs, func(t *testing.T, i int, fs []model.Finding) {
		c := cases[i]
		// Titles carry the numbers; each kind of finding is told
		// apart by the metric only it has.
		kindMetric := map[string]string{
			"Synchronous memory copies":              "sync_copies",
			"Copies from or to pageable host memory": "pageable_copies",
			"Many tiny memory copies":                "small_copies",
			"Memory copies below expected bandwidth": "achieved_bandwidth",
		}
		byTitle := map[string]model.Finding{}
		for _, f := range fs {
			for kind, metric := range kindMetric {
				if _, ok := f.Metric(metric); ok {
					byTitle[kind] = f
				}
			}
		}
		for i, w := range c.want {
			f, ok := byTitle[w.title]
			if !ok {
				t.Fatalf("no finding %q", w.title)
			}
			t.Log(f.Message)
			if f.Severity != w.sev || f.Confidence != w.conf || f.Rule != "memcpy" || f.Layer != model.LayerMemory {
				t.Errorf("finding %d: %q %v %v %s %s", i, f.Title, f.Severity, f.Confidence, f.Rule, f.Layer)
			}
			for n, v := range w.metrics {
				m, ok := f.Metric(n)
				if !ok || m.Value != v {
					t.Errorf("metric %s = %v (present %t), want %v", n, m.Value, ok, v)
				}
			}
			if w.msg != "" && !strings.Contains(f.Message, w.msg) {
				t.Errorf("message %q lacks %q", f.Message, w.msg)
			}
			if len(f.Evidence) != w.ev {
				t.Errorf("evidence = %d, want %d", len(f.Evidence), w.ev)
			}
			for _, e := range f.Evidence {
				if e.End <= e.Start || e.Device != 0 || e.Stream != 7 {
					t.Errorf("bad evidence %+v", e)
				}
			}
		}
	})
}

func TestExpectedTable(t *testing.T) {
	for _, c := range []struct {
		name      string
		host, mem float64
	}{
		{"NVIDIA H100 80GB HBM3", 50, 3350},
		{"NVIDIA H100 PCIe", 50, 2000},
		{"NVIDIA GH200 480GB", 400, 4000},
		{"NVIDIA H200", 50, 4800},
		{"NVIDIA H20", 50, 4000},
		{"NVIDIA A100-SXM4-80GB", 25, 1555},
		{"NVIDIA A10G", 25, 600},
		{"NVIDIA L40S", 25, 864},
		{"NVIDIA L4", 25, 300},
		{"Tesla V100-SXM2-16GB", 12, 900},
		{"AMD Instinct MI300X", 50, 5300},
		{"Something New", 12, 0},
	} {
		tr := model.NewTrace("x", model.FormatNsys)
		tr.Devices = []model.Device{{ID: 0, Name: c.name}}
		h, m, _ := expected(tr, 0)
		if h != c.host || m != c.mem {
			t.Errorf("%s: %v/%v, want %v/%v", c.name, h, m, c.host, c.mem)
		}
	}
	// The capture's own memory bandwidth wins over the table.
	tr := model.NewTrace("x", model.FormatNsys)
	tr.Devices = []model.Device{{ID: 0, Name: "NVIDIA A100-SXM4-80GB", MemoryBandwidth: 2039e9}}
	if _, m, _ := expected(tr, 0); m != 2039 {
		t.Errorf("memory bandwidth %v, want 2039", m)
	}
}

// BenchmarkMemcpy runs the rule on 1M copies (half tiny, a quarter pageable,
// a quarter synchronous) with their 1M issuing calls.
func BenchmarkMemcpy(b *testing.B) {
	tr := bigTrace(1_000_000)
	set := fixture.Set(tr)
	list := []*detectors.Detector{Detector}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := detectors.Run(set, list, detectors.Config{})
		if len(res.Findings) < 3 {
			b.Fatalf("findings: %d", len(res.Findings))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.MemOps)), "ns/copy")
}

func bigTrace(n int) *model.Trace {
	t := model.NewTrace("big.sqlite", model.FormatNsys)
	t.Devices = []model.Device{{ID: 0, Name: "NVIDIA A100-SXM4-80GB"}}
	th := t.ThreadFor(100, 1)
	async := t.Intern("cudaMemcpyAsync_v3020")
	sync := t.Intern("cudaMemcpy_v3020")
	name := t.Intern("Memcpy HtoD")
	t.APICalls = make([]model.APICall, 0, n)
	t.MemOps = make([]model.MemOp, 0, n)
	var now model.Time
	for i := 0; i < n; i++ {
		c := model.APICall{Start: now, End: now + 4000, Thread: th, Correlation: int64(i + 1), Ident: t.InternAPI(model.APIIdent{Name: async, Scope: 100, Class: model.APIMemcpy})}
		m := model.MemOp{Start: now + 2000, End: now + 5000, Correlation: int64(i + 1), CorrScope: 100, Stream: 7, Name: name,
			Kind: model.MemHtoD, Src: model.MemPinned, Dst: model.MemDevice, Bytes: 512}
		switch i % 4 {
		case 1:
			m.Src, m.Bytes = model.MemPageable, 1<<20
		case 2:
			c.Ident, m.Bytes = t.InternAPI(model.APIIdent{Name: sync, Scope: 100, Class: model.APIMemcpy}), 1<<20
		}
		t.APICalls = append(t.APICalls, c)
		t.MemOps = append(t.MemOps, m)
		now += 10 * model.Time(model.Microsecond)
	}
	t.Finalize()
	return t
}
