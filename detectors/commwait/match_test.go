package commwait

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// irregular returns n collective start times (µs) with uneven gaps.
func irregular(n int, seed float64) []float64 {
	out := make([]float64, n)
	at := seed
	for i := range out {
		out[i] = at
		at += 700 + float64((i*37+int(seed))%11)*290
	}
	return out
}

// TestRejectsNonOverlappingMatches: two ranks whose collectives are not the
// same operations (different groups of a bigger job, say) must not produce a
// straggler claim: paired in order they do not overlap once aligned.
func TestRejectsNonOverlappingMatches(t *testing.T) {
	var traces []*model.Trace
	for r, seed := range []float64{0, 5} {
		b := fixture.New("r"+string(rune('0'+r))+".json", model.FormatKineto)
		b.T.Rank, b.T.WorldSize = r*64, 128
		th := b.Thread(1, "main")
		for _, s := range irregular(20, seed*13) {
			b.Collective(0, 20, model.CollSendRecv, 1<<16, s, s+100, th, s-5)
		}
		traces = append(traces, b.Build())
	}
	res := runSet(t, traces)
	if fs := find(res, "Straggler"); len(fs) != 0 {
		t.Fatalf("straggler claimed from unmatched collectives: %+v", fs)
	}
	var reason string
	for _, n := range res.NotMeasurable {
		if strings.HasPrefix(n.Reason, "stragglers:") {
			reason = n.Reason
		}
	}
	if !strings.Contains(reason, "rejected") || !strings.Contains(reason, "2 of 128 ranks") {
		t.Errorf("not-measurable reason should count rejected matches and say 2 of 128 ranks: %q", reason)
	}
}

// TestProfilerStartSkewIsNotStraggling: a rank late only at the first
// collective after profiler start is not a straggler.
func TestProfilerStartSkewIsNotStraggling(t *testing.T) {
	traces := rankSet(4, -1, 0, true)
	// Rank 3 arrives 5 ms late at the first collective only.
	for _, tr := range traces {
		tr.Collectives[0].Start -= model.Time(5 * model.Millisecond)
		tr.Kernels = nil
	}
	traces[3].Collectives[0].Start += model.Time(5 * model.Millisecond)
	res := runSet(t, traces)
	if fs := find(res, "Straggler"); len(fs) != 0 {
		t.Fatalf("profiler-start skew reported as straggling: %+v", fs[0])
	}
	if fs := find(res, "No straggler"); len(fs) != 1 || fs[0].Severity != model.SevInfo || fs[0].Evidence[0].Rank != 3 {
		t.Errorf("want one info note on the first-collective skew (rank 3): %+v", res.Findings)
	}
	// With a real straggler, the first collective's skew is reported apart.
	traces = rankSet(4, 1, 300, true)
	res = runSet(t, traces)
	fs := find(res, "Straggler")
	if len(fs) != 1 {
		t.Fatalf("findings: %+v", res.Findings)
	}
	if m, _ := fs[0].Metric("straggler_rank"); m.Value != 1 {
		t.Errorf("straggler %v, want 1", m.Value)
	}
	if !strings.Contains(fs[0].Message, "profiler-start skew") || !strings.Contains(fs[0].Title, "4 of 4 ranks") {
		t.Errorf("message: %s / title: %s", fs[0].Message, fs[0].Title)
	}
	ranks := map[int]bool{}
	for _, e := range fs[0].Evidence {
		ranks[e.Rank] = true
	}
	if len(ranks) != 4 {
		t.Errorf("want one evidence item per rank, got %+v", fs[0].Evidence)
	}
}

// TestMatchesBySequenceNumber: with sequence numbers, a rank whose capture
// misses the first collectives is still paired correctly.
func TestMatchesBySequenceNumber(t *testing.T) {
	traces := rankSet(2, 1, 400, true)
	for _, tr := range traces {
		for i := range tr.Collectives {
			tr.Collectives[i].Seq = int64(i + 100)
		}
	}
	traces[1].Collectives = traces[1].Collectives[3:]
	for _, tr := range traces {
		tr.Kernels = nil // collective records only
	}
	m := Match(traces)
	if m.By != "sequence number" || len(m.Matches) != 17 || m.Rejected != 0 {
		t.Fatalf("by %q, %d matches, %d rejected", m.By, len(m.Matches), m.Rejected)
	}
	l := m.Arrivals()
	if l.Mean[1] != 400*model.Microsecond {
		t.Errorf("rank 1 lateness %s, want 400µs", l.Mean[1])
	}
}

// TestSlowCollectivesLikeWithLike: all-reduces of very different sizes are
// not "slow" relative to each other; without sizes or steps the check is
// not measurable; with steps it compares the same position in each step.
func TestSlowCollectivesLikeWithLike(t *testing.T) {
	build := func(sized bool, steps int, slowAt int) *model.Trace {
		b := fixture.New("mix.json", model.FormatKineto)
		th := b.Thread(1, "main")
		durs := []float64{12500, 80, 950}
		at := 0.0
		n := 0
		for s := 0; s < max(steps, 4); s++ {
			if steps > 0 {
				b.Step(th, s, at, at+20000)
			}
			for k, d := range durs {
				bytes := int64(-1)
				if sized {
					bytes = int64(1) << (10 + 4*k)
				}
				if n == slowAt {
					d *= 6
				}
				b.Collective(0, 20, model.CollAllReduce, bytes, at+10+float64(k)*1000, at+10+float64(k)*1000+d, th, at+float64(k)*1000)
				n++
			}
			at += 100000
		}
		return b.Build()
	}
	res := runSet(t, []*model.Trace{build(true, 0, -1)})
	if fs := find(res, "rank"); len(fs) != 0 {
		t.Errorf("sized mix: %+v", fs)
	}
	for _, f := range res.Findings {
		if strings.Contains(f.Title, "collectives took over") {
			t.Errorf("sized mix flagged: %s", f.Title)
		}
	}
	res = runSet(t, []*model.Trace{build(false, 0, -1)})
	found := false
	for _, n := range res.NotMeasurable {
		found = found || strings.Contains(n.Reason, "sizes are not recorded")
	}
	if !found {
		t.Errorf("unsized without steps: want not measurable, got %+v / %+v", res.Findings, res.NotMeasurable)
	}
	res = runSet(t, []*model.Trace{build(false, 6, -1)})
	for _, f := range res.Findings {
		if strings.Contains(f.Title, "collectives took over") {
			t.Errorf("unsized with steps flagged: %s", f.Title)
		}
	}
	res = runSet(t, []*model.Trace{build(false, 6, 7)})
	hit := false
	for _, f := range res.Findings {
		hit = hit || strings.HasPrefix(f.Title, "1 collectives took over")
	}
	if !hit {
		t.Errorf("planted slow collective at a step position not found: %+v", res.Findings)
	}
}
