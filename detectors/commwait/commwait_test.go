package commwait

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// rankSet builds nRanks traces of one job running 20 all-reduces. Rank
// `late` (or none when -1) starts each collective lateUS after the others;
// every collective ends when the last rank arrives plus 200 µs. Each rank's
// clock is skewed by rank*3 ms to check the alignment.
func rankSet(nRanks, late int, lateUS float64, overlap bool) []*model.Trace {
	var out []*model.Trace
	for r := 0; r < nRanks; r++ {
		b := fixture.New("rank"+string(rune('0'+r))+".json", model.FormatKineto)
		b.T.Rank = r
		b.T.WorldSize = nRanks
		th := b.Thread(1, "main")
		skew := float64(r) * 3000
		for i := 0; i < 20; i++ {
			s := float64(i)*2000 + skew
			start := s + 100
			if r == late {
				start += lateUS
			}
			end := s + 100 + lateUS + 200
			if late < 0 {
				end = s + 300
			}
			b.Kernel(0, 7, "gemm", s, s+90, th, s-10)
			if overlap {
				b.Kernel(0, 7, "gemm", start, end, th, start-10)
			}
			b.Collective(0, 20, model.CollAllReduce, 1<<20, start, end, th, start-5)
		}
		out = append(out, b.Build())
	}
	return out
}

func runSet(t *testing.T, traces []*model.Trace) detectors.Result {
	t.Helper()
	res := detectors.Run(fixture.Set(traces...), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

func find(res detectors.Result, prefix string) []model.Finding {
	var out []model.Finding
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Title, prefix) {
			out = append(out, f)
		}
	}
	return out
}

func TestFindsPlantedStraggler(t *testing.T) {
	res := runSet(t, rankSet(4, 2, 500, true))
	fs := find(res, "Straggler")
	if len(fs) != 1 {
		t.Fatalf("straggler findings: %+v", res.Findings)
	}
	f := fs[0]
	if m, _ := f.Metric("straggler_rank"); m.Value != 2 {
		t.Errorf("straggler rank %v, want 2", m.Value)
	}
	if m, _ := f.Metric("straggler_mean_lateness_ns"); m.Value != 500e3 {
		t.Errorf("mean lateness %v, want 500 µs", m.Value)
	}
	// The first collective is profiler-start skew and is left out: 19 counted.
	if m, _ := f.Metric("straggler_last_count"); m.Value != 19 {
		t.Errorf("last count %v, want 19", m.Value)
	}
	if m, _ := f.Metric("wait_caused_ns"); m.Value != 3*19*500e3 {
		t.Errorf("wait caused %v", m.Value)
	}
	if m, _ := f.Metric("rank3_clock_offset_ns"); m.Value != 9000e3 {
		t.Errorf("rank 3 clock offset %v, want 9 ms", m.Value)
	}
	if f.Severity != model.SevWarning {
		t.Errorf("severity %s", f.Severity)
	}
}

func TestQuietWhenRanksArriveTogether(t *testing.T) {
	res := runSet(t, rankSet(4, -1, 0, true))
	if len(res.Findings) != 0 {
		t.Fatalf("findings: %+v", res.Findings)
	}
}

func TestFindsExposedCommunication(t *testing.T) {
	res := runSet(t, rankSet(1, -1, 0, false)[:1])
	fs := find(res, "device 0")
	if len(fs) == 0 {
		fs = find(res, "rank 0 device 0")
	}
	if len(fs) != 1 {
		t.Fatalf("findings: %+v", res.Findings)
	}
	// 20 collectives of 200 µs, none overlapped; span 38.3 ms.
	if m, _ := fs[0].Metric("exposed_comm_ns"); m.Value != 20*200e3 {
		t.Errorf("exposed %v", m.Value)
	}
	if len(res.NotMeasurable) != 1 || !strings.Contains(res.NotMeasurable[0].Reason, "one trace") {
		t.Errorf("not measurable: %+v", res.NotMeasurable)
	}
}

func TestFindsWaitingCollectives(t *testing.T) {
	b := fixture.New("w.json", model.FormatKineto)
	th := b.Thread(1, "main")
	for i := 0; i < 10; i++ {
		s := float64(i) * 1000
		d := 100.0
		if i == 7 {
			d = 600
		}
		b.Kernel(0, 7, "gemm", s, s+50, th, s)
		b.Collective(0, 20, model.CollAllReduce, 4096, s+50, s+50+d, th, s+40)
	}
	res := runSet(t, []*model.Trace{b.Build()})
	fs := find(res, "1 collectives")
	if len(fs) != 1 {
		t.Fatalf("findings: %+v", res.Findings)
	}
	if m, _ := fs[0].Metric("wait_ns"); m.Value != 500e3 {
		t.Errorf("wait %v", m.Value)
	}
}

func TestNotMeasurableWithoutComm(t *testing.T) {
	res := detectors.Run(fixture.Set(fixture.BackToBack(5)), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 1 {
		t.Fatalf("%+v", res)
	}
}
