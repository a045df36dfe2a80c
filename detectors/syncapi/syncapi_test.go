package syncapi

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/internal/detectortest"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// steps adds five 10 ms ProfilerSteps on th with a kernel launch in each, so
// that the steady state (after step 0) is [10 ms, 50 ms): 40 ms of wall time.
func steps(b *fixture.B, th model.ThreadID) {
	for k := 0; k < 5; k++ {
		s := float64(k) * 10000
		b.Step(th, k+1, s, s+10000)
		b.Kernel(0, 7, "gemm", s+100, s+2000, th, s+50)
	}
}

// item adds x.item() on th at start: aten::item → aten::_local_scalar_dense →
// cudaMemcpyAsync (5 µs) + cudaStreamSynchronize (wait µs).
func item(b *fixture.B, th model.ThreadID, start, wait float64) {
	b.Range(th, model.RangeCPUOp, "aten::item", start, start+wait+20)
	b.Range(th, model.RangeCPUOp, "aten::_local_scalar_dense", start+2, start+wait+18)
	b.Copy(0, 7, model.MemDtoH, model.MemDevice, model.MemPinned, 4, start+5, start+6, th, "cudaMemcpyAsync", start+4, start+9)
	b.Sync(th, "cudaStreamSynchronize", start+10, start+10+wait, 0, 7, model.SyncStream)
}

type want struct {
	quiet    bool
	notMeas  string // substring of the not-measurable reason
	sev      model.Severity
	conf     model.Confidence
	calls    int
	blocked  model.Duration // thread time
	bwall    model.Duration // wall time with any thread blocked (0: same as blocked)
	wall     model.Duration
	sites    []string // leading call sites in the message, in order
	evidence int      // number of evidence entries
	firstEv  model.Evidence
}

var cases = []struct {
	name  string
	build func() *model.Trace
	want  want
}{
	{
		// Planted: .item() every steady step (4 × 800 µs) plus a device sync
		// in an NVTX range (400 µs); the warm-up step's 2 ms sync is skipped.
		name: "item-every-step",
		build: func() *model.Trace {
			b := fixture.New("item.json", model.FormatKineto)
			th := b.Thread(1, "python")
			steps(b, th)
			b.Sync(th, "cudaDeviceSynchronize", 3000, 5000, 0, model.NoStream, model.SyncContext)
			for k := 1; k < 5; k++ {
				item(b, th, float64(k)*10000+5000, 800)
			}
			b.Range(th, model.RangeNVTX, "log_metrics", 47000, 48000)
			b.Sync(th, "cudaDeviceSynchronize_v3020", 47100, 47500, 0, model.NoStream, model.SyncContext)
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Measured, calls: 5, blocked: 3600 * model.Microsecond,
			wall: 40 * model.Millisecond, sites: []string{"aten::item 3.20ms (4)", "log_metrics 400.0µs (1)"}, evidence: 5,
			firstEv: model.Evidence{Rank: model.NoRank, Device: 0, Stream: 7, Thread: 1, Start: fixture.US(15010), End: fixture.US(15810),
				GPUIdle: 800 * model.Microsecond, GPUIdleKnown: true}},
	},
	{
		// Two 300 µs syncs: 1.5% of the wall time, above info_pct, below warn_pct.
		name: "few-syncs-info",
		build: func() *model.Trace {
			b := fixture.New("info.json", model.FormatKineto)
			th := b.Thread(1, "python")
			steps(b, th)
			b.Sync(th, "cudaEventSynchronize", 20000, 20300, 0, 7, model.SyncOnEvent)
			b.Sync(th, "cudaEventSynchronize", 30000, 30300, 0, 7, model.SyncOnEvent)
			return b.Build()
		},
		want: want{sev: model.SevInfo, conf: model.Measured, calls: 2, blocked: 600 * model.Microsecond,
			wall: 40 * model.Millisecond, sites: []string{"(no enclosing range) 600.0µs (2)"}, evidence: 2},
	},
	{
		// Synchronous cudaMemcpy in the loop counts as a blocking copy.
		name: "sync-memcpy",
		build: func() *model.Trace {
			b := fixture.New("memcpy.sqlite", model.FormatNsys)
			th := b.Thread(1, "python")
			steps(b, th)
			for k := 1; k < 5; k++ {
				s := float64(k)*10000 + 3000
				b.Range(th, model.RangeNVTX, "load_batch", s, s+700)
				b.Copy(0, 0, model.MemHtoD, model.MemPageable, model.MemDevice, 8<<20, s+100, s+600, th, "cudaMemcpy_v3020", s+10, s+610)
			}
			return b.Build()
		},
		// The GPU is busy with the copy itself for 500 of the 600 µs each
		// call blocks: 400 µs of GPU idle in 40 ms is below warn_pct, so
		// the blocking costs little and is reported as info.
		want: want{sev: model.SevInfo, conf: model.Measured, calls: 4, blocked: 2400 * model.Microsecond,
			wall: 40 * model.Millisecond, sites: []string{"load_batch 2.40ms (4)"}, evidence: 4,
			firstEv: model.Evidence{Rank: model.NoRank, Device: 0, Stream: 0, Thread: 1, Start: fixture.US(13010), End: fixture.US(13610),
				GPUIdle: 100 * model.Microsecond, GPUIdleKnown: true}},
	},
	{
		// A driver call nested in the runtime call that made it is one wait;
		// two threads blocked at once count twice in thread time but once
		// in the share of wall time (2 ms of 40).
		name: "nested-driver-two-threads",
		build: func() *model.Trace {
			b := fixture.New("nested.sqlite", model.FormatNsys)
			th := b.Thread(1, "python")
			th2 := b.Thread(2, "worker")
			steps(b, th)
			b.Copy(0, 7, model.MemDtoH, model.MemDevice, model.MemPageable, 1<<20, 20100, 21900, th, "cudaMemcpy_v3020", 20000, 22000)
			b.API(th, "cuMemcpyDtoH_v2", model.APIMemcpy, 20010, 21990, 0)
			b.Sync(th2, "cudaStreamSynchronize_v3020", 20000, 22000, 0, 7, model.SyncStream)
			return b.Build()
		},
		// The 1.8 ms copy keeps the GPU busy: info.
		want: want{sev: model.SevInfo, conf: model.Measured, calls: 2, blocked: 4 * model.Millisecond, bwall: 2 * model.Millisecond,
			wall: 40 * model.Millisecond, evidence: 2},
	},
	{
		// GPU-saturated: each step's kernels are queued at its start and run
		// back to back for the whole step; the host then waits 3 ms per step
		// in cudaStreamSynchronize (7.5% of the wall time, above warn_pct).
		// The queue is never empty, so the waiting is harmless: info.
		name: "gpu-busy-sync-info",
		build: func() *model.Trace {
			b := fixture.New("busy.sqlite", model.FormatNsys)
			th := b.Thread(1, "python")
			for k := 0; k < 5; k++ {
				s := float64(k) * 10000
				b.Step(th, k+1, s, s+10000)
				for j := 0; j < 10; j++ {
					b.Kernel(0, 7, "gemm", s+float64(j)*1000, s+float64(j+1)*1000, th, s+float64(j))
				}
				if k > 0 {
					b.Sync(th, "cudaStreamSynchronize_v3020", s+6000, s+9000, 0, 7, model.SyncStream)
				}
			}
			return b.Build()
		},
		want: want{sev: model.SevInfo, conf: model.Measured, calls: 4, blocked: 12 * model.Millisecond,
			wall: 40 * model.Millisecond, evidence: 4,
			firstEv: model.Evidence{Rank: model.NoRank, Device: 0, Stream: 7, Thread: 1, Start: fixture.US(16000), End: fixture.US(19000),
				GPUIdle: 0, GPUIdleKnown: true}},
	},
	{
		// Without steps the first 10% of the host span is warm-up: the 5 ms
		// sync at 1 ms is skipped, the one at 50 ms counts (5% of 90 ms).
		name: "no-steps-warmup-pct",
		build: func() *model.Trace {
			b := fixture.New("nosteps.json", model.FormatKineto)
			th := b.Thread(1, "python")
			b.Kernel(0, 7, "gemm", 10, 20, th, 0)
			b.Sync(th, "cudaStreamSynchronize", 1000, 6000, 0, 7, model.SyncStream)
			b.Sync(th, "cudaStreamSynchronize", 50000, 54500, 0, 7, model.SyncStream)
			b.Kernel(0, 7, "gemm", 99000, 99500, th, 99995)
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Measured, calls: 1, blocked: 4500 * model.Microsecond,
			wall: 90 * model.Millisecond, evidence: 1},
	},
	{
		// CPU ops only (no runtime calls): aten::item counted by name, once
		// per nesting, with its whole duration; confidence inferred.
		name: "cpu-only-item-names",
		build: func() *model.Trace {
			b := fixture.New("cpuonly.json", model.FormatKineto).ClearCaps()
			th := b.Thread(1, "python")
			for k := 0; k < 5; k++ {
				s := float64(k) * 10000
				b.Step(th, k+1, s, s+10000)
				b.Range(th, model.RangeCPUOp, "aten::item", s+1000, s+1500)
				b.Range(th, model.RangeCPUOp, "aten::_local_scalar_dense", s+1010, s+1490)
			}
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Inferred, calls: 4, blocked: 2 * model.Millisecond,
			wall: 40 * model.Millisecond, sites: []string{"aten::item 2.00ms (4)"}, evidence: 4},
	},
	{
		// Clean: one 100 µs sync in the steady state (0.25%), big ones only
		// in warm-up and after the last step.
		name: "clean",
		build: func() *model.Trace {
			b := fixture.New("clean.json", model.FormatKineto)
			th := b.Thread(1, "python")
			steps(b, th)
			b.Sync(th, "cudaDeviceSynchronize", 3000, 8000, 0, model.NoStream, model.SyncContext)
			b.Sync(th, "cudaStreamSynchronize", 25000, 25100, 0, 7, model.SyncStream)
			b.API(th, "cudaMemcpyAsync", model.APIMemcpy, 26000, 26010, 0)
			// Teardown after the last step (the profiler's final sync).
			b.Sync(th, "cudaDeviceSynchronize", 50000, 58000, 0, model.NoStream, model.SyncContext)
			return b.Build()
		},
		want: want{quiet: true},
	},
	{
		name: "gpu-only-not-measurable",
		build: func() *model.Trace {
			b := fixture.New("gpuonly.json", model.FormatKineto).ClearCaps()
			b.Kernel(0, 7, "gemm", 0, 100, model.NoThread, 0)
			return b.Build()
		},
		want: want{notMeas: "no CUDA/HIP API calls or CPU operators"},
	},
}

// TestSyncAPIFindsPlanted runs the fixtures with a planted fault.
func TestSyncAPIFindsPlanted(t *testing.T) { runCases(t, detectortest.Planted) }

// TestSyncAPIQuietOnClean runs the clean fixtures: no finding.
func TestSyncAPIQuietOnClean(t *testing.T) { runCases(t, detectortest.Clean) }

// TestSyncAPINotMeasurable runs the fixtures that lack the rule's inputs.
func TestSyncAPINotMeasurable(t *testing.T) { runCases(t, detectortest.NotMeasurable) }

func runCases(t *testing.T, kind string) {
	cs := make([]detectortest.Case, len(cases))
	for i, c := range cases {
		n := 1
		if c.want.quiet || c.want.notMeas != "" {
			n = 0
		}
		cs[i] = detectortest.Case{Name: c.name, Build: c.build, NotMeasurable: c.want.notMeas, Findings: n}
	}
	detectortest.RunCases(t, Detector, kind, cs, func(t *testing.T, i int, fs []model.Finding) {
		w := cases[i].want
		f := fs[0]
		t.Log(f.Message)
		if f.Severity != w.sev || f.Confidence != w.conf || f.Rule != "sync-api" || f.Layer != model.LayerScheduling {
			t.Errorf("severity/confidence/rule/layer = %v/%v/%s/%s", f.Severity, f.Confidence, f.Rule, f.Layer)
		}
		metric := func(n string) model.Metric {
			m, ok := f.Metric(n)
			if !ok {
				t.Fatalf("metric %s missing", n)
			}
			return m
		}
		if got := metric("sync_calls").Value; got != float64(w.calls) {
			t.Errorf("sync_calls = %v, want %d", got, w.calls)
		}
		if got := metric("blocked_time").Value; got != float64(w.blocked) {
			t.Errorf("blocked_time = %v, want %d", got, w.blocked)
		}
		bw := w.bwall
		if bw == 0 {
			bw = w.blocked
		}
		sh := metric("blocked_share")
		if sh.Num != float64(bw) || sh.Den != float64(w.wall) {
			t.Errorf("blocked_share = %v/%v, want %d/%d", sh.Num, sh.Den, bw, w.wall)
		}
		if len(w.sites) > 0 {
			i := strings.Index(f.Message, "top call sites: ")
			if i < 0 || !strings.HasPrefix(f.Message[i+len("top call sites: "):], strings.Join(w.sites, ", ")) {
				t.Errorf("message sites: %q, want %q", f.Message, w.sites)
			}
		}
		if len(f.Evidence) != w.evidence {
			t.Errorf("evidence = %d, want %d", len(f.Evidence), w.evidence)
		}
		if w.firstEv != (model.Evidence{}) {
			e := f.Evidence[0]
			e.Note = ""
			if e != w.firstEv {
				t.Errorf("first evidence = %+v, want %+v", e, w.firstEv)
			}
		}
		if f.Recommendation == "" {
			t.Error("no recommendation")
		}
	})
}

// BenchmarkSyncAPI runs the rule on 1M API calls (launches with a stream
// sync every 100 calls) under 10k NVTX ranges.
func BenchmarkSyncAPI(b *testing.B) {
	tr := bigTrace(1_000_000)
	set := fixture.Set(tr)
	list := []*detectors.Detector{Detector}
	cfg := detectors.Config{Params: map[string]map[string]float64{"sync-api": {"info_pct": 0.1}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := detectors.Run(set, list, cfg)
		if len(res.Findings) != 1 {
			b.Fatalf("findings: %d", len(res.Findings))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.APICalls)), "ns/call")
}

func bigTrace(n int) *model.Trace {
	t := model.NewTrace("big.sqlite", model.FormatNsys)
	th := t.ThreadFor(100, 1)
	launch := t.Intern("cudaLaunchKernel_v7000")
	sync := t.Intern("cudaStreamSynchronize_v3020")
	nvtx := t.Intern("iteration")
	t.APICalls = make([]model.APICall, 0, n)
	t.Kernels = make([]model.Kernel, 0, n)
	var now model.Time
	for i := 0; i < n; i++ {
		if i%100 == 0 {
			t.Ranges = append(t.Ranges, model.Range{Start: now, End: now + 100*10*model.Time(model.Microsecond), Thread: th,
				Kind: model.RangeNVTX, Name: nvtx, Track: t.InternTrack(model.CPUTrack)})
		}
		c := model.APICall{Start: now, End: now + 5000, Thread: th, Correlation: int64(i + 1), Ident: t.InternAPI(model.APIIdent{Name: launch, Scope: 100, Class: model.APILaunch})}
		if i%100 == 99 {
			c.Ident, c.End = t.InternAPI(model.APIIdent{Name: sync, Scope: 100, Class: model.APISync}), now+3000
		} else {
			t.Kernels = append(t.Kernels, model.Kernel{Start: now + 6000, End: now + 9000, Correlation: int64(i + 1), CorrScope: 100, Config: t.InternConfig(model.LaunchConfig{Stream: 7})})
		}
		t.APICalls = append(t.APICalls, c)
		now += 10 * model.Time(model.Microsecond)
	}
	t.Finalize()
	return t
}
