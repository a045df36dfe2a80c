package gilstall

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/internal/detectortest"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

const ms = model.Millisecond

// busy launches back-to-back 1 ms kernels on device 0 from th over [from, to) µs.
func busy(b *fixture.B, th model.ThreadID, from, to float64) {
	for s := from; s < to; s += 1000 {
		b.Kernel(0, 7, "gemm", s, s+1000, th, s-50)
	}
}

const cond = "pthread_cond_timedwait@@GLIBC_2.3.2"

type want struct {
	quiet   bool
	notMeas string
	sev     model.Severity
	conf    model.Confidence
	stall   model.Duration // stall_time
	overlap model.Duration // gpu_idle_overlap
	span    model.Duration // GPU span (share denominator)
	stalls  int
	threads int
	msg     string // substring of the message or an evidence note
	firstEv model.Evidence
}

var cases = []struct {
	name  string
	build func() *model.Trace
	want  want
}{
	{
		// Source 1, planted: the launching thread waits 8 ms for the GIL in
		// the middle of a 10 ms GPU gap; the loader's 5 ms wait falls while
		// the GPU is busy and overlaps nothing.
		name: "gil-trace",
		build: func() *model.Trace {
			b := fixture.New("gil.sqlite", model.FormatNsys)
			main := b.Thread(1, "pt_main_thread")
			loader := b.Thread(2, "loader")
			busy(b, main, 1000, 11000)
			busy(b, main, 21000, 31000)
			b.GIL(main, model.GILWaiting, 11000, 19000)
			b.GIL(loader, model.GILHeld, 11000, 19000)
			b.GIL(loader, model.GILWaiting, 2000, 7000)
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Measured, stall: 13 * ms, overlap: 8 * ms, span: 30 * ms, stalls: 2, threads: 2,
			msg:     "The thread that launches the kernels, 100/1 pt_main_thread, is among them: 8.00ms stalled, 8.00ms of it with the GPU idle. The GIL was held meanwhile by: 100/2 loader 8.00ms.",
			firstEv: model.Evidence{Rank: model.NoRank, Device: 0, Stream: model.NoStream, Thread: 1, Start: fixture.US(11000), End: fixture.US(19000)}},
	},
	{
		// Source 1, clean: GIL waits only while the GPU is busy.
		name: "gil-trace-clean",
		build: func() *model.Trace {
			b := fixture.New("gilclean.sqlite", model.FormatNsys)
			main := b.Thread(1, "pt_main_thread")
			loader := b.Thread(2, "loader")
			busy(b, main, 1000, 31000)
			b.GIL(main, model.GILWaiting, 11000, 19000)
			b.GIL(loader, model.GILWaiting, 2000, 7000)
			return b.Build()
		},
		want: want{quiet: true},
	},
	{
		// Source 2, planted: two 5 ms timed waits and a final short one on
		// the launching thread, back to back, inside a 12 ms GPU gap. Decoys:
		// a watchdog's waits whose resolved chain is not the GIL's, and a
		// single 5 ms wait (one timeout is not enough without a chain).
		name: "osrt-switch-interval",
		build: func() *model.Trace {
			b := fixture.New("osrt.sqlite", model.FormatNsys)
			main := b.Thread(1, "python3")
			dog := b.Thread(3, "pt_nccl_watchdog")
			other := b.Thread(4, "python3")
			busy(b, main, 1000, 11000)
			busy(b, main, 23000, 33000)
			b.OSCall(main, cond, 11000, 16000)
			b.OSCall(main, cond, 16020, 21020)
			b.OSCall(main, cond, 21040, 22000)
			b.OSCall(dog, cond, 11000, 16000, "pthread_cond_timedwait@@GLIBC_2.3.2", "std::condition_variable::wait_for", "c10d::ProcessGroupNCCL::ncclCommWatchdog")
			b.OSCall(dog, cond, 16000, 21000, "pthread_cond_timedwait@@GLIBC_2.3.2", "std::condition_variable::wait_for", "c10d::ProcessGroupNCCL::ncclCommWatchdog")
			b.OSCall(other, cond, 12000, 17000)
			b.OSCall(main, "poll", 0, 900)
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Inferred, stall: 11 * ms, overlap: 11 * ms, span: 32 * ms, stalls: 1, threads: 1,
			msg:     "source: OS runtime waits",
			firstEv: model.Evidence{Rank: model.NoRank, Device: 0, Stream: model.NoStream, Thread: 1, Start: fixture.US(11000), End: fixture.US(22000)}},
	},
	{
		// Source 2 with a call chain: one 3 ms wait through take_gil is
		// enough, whatever its length.
		name: "osrt-take-gil-chain",
		build: func() *model.Trace {
			b := fixture.New("chain.sqlite", model.FormatNsys).Process(100, "train")
			main := b.Thread(1, "train")
			busy(b, main, 1000, 11000)
			busy(b, main, 15000, 25000)
			b.OSCall(main, cond, 11000, 14000, "pthread_cond_timedwait@@GLIBC_2.3.2", "take_gil", "PyEval_RestoreThread", "0x7f38d9669c4a")
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Inferred, stall: 3 * ms, overlap: 3 * ms, span: 24 * ms, stalls: 1, threads: 1,
			msg: "call chain through take_gil"},
	},
	{
		// Source 2, clean: short 1 ms timed waits in the GPU gap are not at
		// the switch interval.
		name: "osrt-clean",
		build: func() *model.Trace {
			b := fixture.New("osrtclean.sqlite", model.FormatNsys)
			main := b.Thread(1, "python3")
			busy(b, main, 1000, 11000)
			busy(b, main, 23000, 33000)
			for s := 11000.0; s < 21000; s += 1010 {
				b.OSCall(main, cond, s, s+1000)
			}
			return b.Build()
		},
		want: want{quiet: true},
	},
	{
		// Source 3, planted (Kineto with_stack): the launching thread falls
		// silent for 10.1 ms while the loader thread runs Python; their
		// Python activity never overlaps.
		name: "python-stacks",
		build: func() *model.Trace {
			b := fixture.New("stack.json", model.FormatKineto)
			main := b.Thread(1, "python")
			loader := b.Thread(2, "")
			b.Python(main, "train.py(10): main", 0, 30000)
			for _, x := range []float64{0, 20000} {
				for s := x; s < x+10000; s += 1000 {
					b.Python(main, "<built-in method mm of type object>", s, s+900)
					b.Kernel(0, 7, "gemm", s+200, s+1100, main, s+100)
				}
			}
			b.Python(loader, "loader.py(5): run", 10000, 19000)
			for s := 10000.0; s < 19000; s += 1000 {
				b.Python(loader, "loader.py(9): decode", s, s+900)
			}
			return b.Build()
		},
		want: want{sev: model.SevWarning, conf: model.Inferred, stall: 8900 * model.Microsecond, overlap: 8800 * model.Microsecond,
			span: 29900 * model.Microsecond, stalls: 1, threads: 1, msg: "Meanwhile Python ran on: 100/2 8.10ms.",
			firstEv: model.Evidence{Rank: model.NoRank, Device: 0, Stream: model.NoStream, Thread: 1, Start: fixture.US(10000), End: fixture.US(18900)}},
	},
	{
		// Source 3, clean: the same serialised threads, but a long kernel
		// keeps the GPU busy through the launcher's silence.
		name: "python-stacks-clean",
		build: func() *model.Trace {
			b := fixture.New("stackclean.json", model.FormatKineto)
			main := b.Thread(1, "python")
			loader := b.Thread(2, "")
			for _, x := range []float64{0, 20000} {
				for s := x; s < x+10000; s += 1000 {
					b.Python(main, "<built-in method mm of type object>", s, s+900)
					b.Kernel(0, 7, "gemm", s+200, s+1100, main, s+100)
				}
			}
			b.Kernel(0, 7, "long_gemm", 10100, 20200, main, 9950)
			for s := 10000.0; s < 19000; s += 1000 {
				b.Python(loader, "loader.py(9): decode", s, s+900)
			}
			return b.Build()
		},
		want: want{quiet: true},
	},
	{
		// Source 3, clean: the loader runs while the launcher is busy too
		// (the threads overlap), so Python stacks cannot tell.
		name: "python-stacks-overlapping",
		build: func() *model.Trace {
			b := fixture.New("overlap.json", model.FormatKineto)
			main := b.Thread(1, "python")
			loader := b.Thread(2, "")
			for s := 0.0; s < 10000; s += 1000 {
				b.Python(main, "<built-in method mm of type object>", s, s+900)
				b.Kernel(0, 7, "gemm", s+200, s+1100, main, s+100)
				b.Python(loader, "loader.py(9): decode", s, s+900)
			}
			return b.Build()
		},
		want: want{notMeas: "overlaps"},
	},
	{
		// Python frames on one thread only cannot show contention.
		name: "python-one-thread",
		build: func() *model.Trace {
			b := fixture.New("onethread.json", model.FormatKineto)
			main := b.Thread(1, "python")
			b.Python(main, "train.py(10): main", 0, 12000)
			busy(b, main, 1000, 11000)
			return b.Build()
		},
		want: want{notMeas: "Python stacks cover at most one thread per process"},
	},
	{
		// OS waits on a Python thread but no GPU work: nothing can starve.
		name: "osrt-no-gpu",
		build: func() *model.Trace {
			b := fixture.New("nogpu.sqlite", model.FormatNsys).ClearCaps()
			main := b.Thread(1, "python3")
			b.OSCall(main, cond, 11000, 16000)
			b.OSCall(main, cond, 16020, 21020)
			return b.Build()
		},
		want: want{notMeas: "no GPU activity"},
	},
	{
		name: "no-source",
		build: func() *model.Trace {
			b := fixture.New("plain.json", model.FormatKineto)
			main := b.Thread(1, "python")
			busy(b, main, 1000, 11000)
			return b.Build()
		},
		want: want{notMeas: "no GIL, OS-runtime or Python-stack data in the capture; re-capture with"},
	},
}

// TestGILStallFindsPlanted runs the fixtures with a planted fault.
func TestGILStallFindsPlanted(t *testing.T) { runCases(t, detectortest.Planted) }

// TestGILStallQuietOnClean runs the clean fixtures: no finding.
func TestGILStallQuietOnClean(t *testing.T) { runCases(t, detectortest.Clean) }

// TestGILStallNotMeasurable runs the fixtures that lack the rule's inputs.
func TestGILStallNotMeasurable(t *testing.T) { runCases(t, detectortest.NotMeasurable) }

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
		if f.Severity != w.sev || f.Confidence != w.conf || f.Rule != "gil-stall" || f.Layer != model.LayerScheduling {
			t.Errorf("severity/confidence/rule/layer = %v/%v/%s/%s", f.Severity, f.Confidence, f.Rule, f.Layer)
		}
		check := func(n string, v float64) {
			t.Helper()
			m, ok := f.Metric(n)
			if !ok || m.Value != v {
				t.Errorf("metric %s = %v (present %t), want %v", n, m.Value, ok, v)
			}
		}
		check("stall_time", float64(w.stall))
		check("gpu_idle_overlap", float64(w.overlap))
		check("stalls", float64(w.stalls))
		check("threads", float64(w.threads))
		if m, _ := f.Metric("gpu_idle_overlap_share"); m.Num != float64(w.overlap) || m.Den != float64(w.span) {
			t.Errorf("share = %v/%v, want %d/%d", m.Num, m.Den, w.overlap, w.span)
		}
		text := f.Message
		for _, e := range f.Evidence {
			text += "\n" + e.Note
		}
		if !strings.Contains(text, w.msg) {
			t.Errorf("message and evidence %q lack %q", text, w.msg)
		}
		if len(f.Evidence) == 0 || len(f.Evidence) > 5 {
			t.Errorf("evidence: %d entries", len(f.Evidence))
		}
		if w.firstEv != (model.Evidence{}) {
			e := f.Evidence[0]
			e.Note = ""
			if !e.GPUIdleKnown || e.GPUIdle <= 0 || e.GPUIdle > e.End.Sub(e.Start) {
				t.Errorf("first evidence gpu idle %s (known %v)", e.GPUIdle, e.GPUIdleKnown)
			}
			e.GPUIdle, e.GPUIdleKnown = 0, false
			if e != w.firstEv {
				t.Errorf("first evidence %+v, want %+v", e, w.firstEv)
			}
		}
	})
}

// TestProcessScope checks that, with Nsight Systems correlation scopes, a
// process's GIL stall is measured against its own GPU's idle time: process
// 100's GPU idles 11..19 ms while process 200 keeps another GPU busy, which
// would hide the gap if the trace's GPUs were pooled.
func TestProcessScope(t *testing.T) {
	b := fixture.New("scoped.sqlite", model.FormatNsys).Process(200, "python3")
	a := b.Thread(1, "python3")
	other := b.ThreadIn(200, 1, "python3")
	busy(b, a, 1000, 11000)
	busy(b, a, 19000, 31000)
	b.GIL(a, model.GILWaiting, 11000, 19000)
	for s := 0.0; s < 40000; s += 1000 {
		b.Kernel(1, 7, "gemm", s, s+1000, other, s-50)
	}
	for i := range b.T.Kernels {
		b.T.Kernels[i].CorrScope = 100
		if b.T.Kernels[i].Device == 1 {
			b.T.Kernels[i].CorrScope = 200
		}
	}
	tr := b.Build()
	res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Findings) != 1 || len(res.NotMeasurable) != 0 {
		t.Fatalf("want one finding, got %+v %+v", res.Findings, res.NotMeasurable)
	}
	m, _ := res.Findings[0].Metric("gpu_idle_overlap_share")
	if m.Num != float64(8*ms) || m.Den != float64(30*ms) {
		t.Errorf("share %v/%v, want 8ms/30ms", m.Num, m.Den)
	}
}

// BenchmarkGILStall runs the rule on 1M kernels with their 1M launch calls,
// once per source: 200k GIL intervals, 300k OS runtime waits, or 1M Python
// frames on two threads.
func BenchmarkGILStall(b *testing.B) {
	for _, src := range []string{"gil", "osrt", "python"} {
		b.Run(src, func(b *testing.B) {
			tr := bigTrace(1_000_000, src)
			set := fixture.Set(tr)
			list := []*detectors.Detector{Detector}
			// The synthetic periods are 100 µs: scale the time thresholds down.
			cfg := detectors.Config{Params: map[string]map[string]float64{"gil-stall": {"switch_interval_us": 25, "python_min_gap_us": 50}}}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := detectors.Run(set, list, cfg)
				if len(res.Findings) != 1 {
					b.Fatalf("findings: %+v %+v", res.Findings, res.NotMeasurable)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Kernels)), "ns/kernel")
		})
	}
}

// bigTrace: every 100 µs a 5 µs launch and a 60 µs kernel; every 10th
// period the main thread stalls (the GPU idles 40 µs of each period anyway).
func bigTrace(n int, src string) *model.Trace {
	t := model.NewTrace("big.sqlite", model.FormatNsys)
	t.Processes = []model.Process{{PID: 100, Name: "python3"}}
	main := t.ThreadFor(100, 1)
	loader := t.ThreadFor(100, 2)
	launch := t.Intern("cudaLaunchKernel_v7000")
	gemm := t.Intern("gemm")
	cond := t.Intern("pthread_cond_timedwait@@GLIBC_2.3.2")
	leaf := t.Intern("<built-in method mm>")
	dec := t.Intern("loader.py(9): decode")
	us := model.Time(model.Microsecond)
	t.APICalls = make([]model.APICall, 0, n)
	t.Kernels = make([]model.Kernel, 0, n)
	for i := 0; i < n; i++ {
		now := model.Time(i) * 100 * us
		t.APICalls = append(t.APICalls, model.APICall{Start: now, End: now + 5*us, Thread: main, Correlation: int64(i + 1), Ident: t.InternAPI(model.APIIdent{Name: launch, Class: model.APILaunch})})
		t.Kernels = append(t.Kernels, model.Kernel{Start: now + 10*us, End: now + 70*us, Correlation: int64(i + 1), Config: t.InternConfig(model.LaunchConfig{Stream: 7}), Name: gemm})
		switch src {
		case "gil":
			if i%5 == 0 {
				t.GIL = append(t.GIL, model.GILInterval{Start: now + 6*us, End: now + 95*us, Thread: main, State: model.GILWaiting})
			}
		case "osrt":
			if i%10 == 0 {
				// Three back-to-back 25 µs waits (the benchmark's switch interval).
				for k := 0; k < 3; k++ {
					s := now + 6*us + model.Time(k)*30*us
					t.OSCalls = append(t.OSCalls, model.OSCall{Start: s, End: s + 25*us, Thread: main, Name: cond, CallChain: -1})
				}
			}
		case "python":
			t.Ranges = append(t.Ranges, model.Range{Start: now, End: now + 6*us, Thread: main, Kind: model.RangePython, Name: leaf,
				Track: t.InternTrack(model.CPUTrack)})
			if i%10 == 0 {
				t.Ranges = append(t.Ranges, model.Range{Start: now + 20*us, End: now + 90*us, Thread: loader, Kind: model.RangePython, Name: dec,
					Track: t.InternTrack(model.CPUTrack)})
			}
		}
	}
	t.Finalize()
	return t
}
