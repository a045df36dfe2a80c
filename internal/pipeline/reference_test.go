package pipeline

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors/breakdown"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return v
}

func corpusFile(t *testing.T, name string) string {
	t.Helper()
	dir := corpus.Dir(t, "corpus/kineto")
	for _, ext := range []string{".json.gz", ".pt.trace.json.gz"} {
		p := filepath.Join(dir, name+ext)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("corpus file for %s not found", name)
	return ""
}

// TestHTAAgreement checks the --window hta breakdown against Holistic Trace
// Analysis' own outputs on the six reference traces: the temporal breakdown
// within 0.5 percentage points and per-name totals within 1%.
func TestHTAAgreement(t *testing.T) {
	refDir := corpus.Dir(t, "reference/hta")
	ents, err := os.ReadDir(refDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		n++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			set, err := Load(context.Background(), []string{corpusFile(t, name)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			devs, kernels := breakdown.Compute(set, breakdown.WindowHTA)
			if len(devs) != 1 {
				t.Fatalf("want one rank summary, got %d", len(devs))
			}
			d := devs[0]
			ref := readCSV(t, filepath.Join(refDir, name, "temporal_breakdown.csv"))[0]
			span := float64(d.Span)
			got := map[string]float64{
				"idle_time_pctg":        100 * float64(d.Idle) / span,
				"compute_time_pctg":     100 * float64(d.Compute) / span,
				"non_compute_time_pctg": 100 * float64(d.NonCompute) / span,
			}
			for _, k := range []string{"idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"} {
				v, want := got[k], num(t, ref[k])
				t.Logf("%s: tracedx %.2f, HTA %.2f (Δ %.2f points)", k, v, want, v-want)
				if math.Abs(v-want) > 0.5 {
					t.Errorf("%s = %.2f, HTA %.2f", k, v, want)
				}
			}
			if want := num(t, ref["kernel_time(us)"]) * 1e3; math.Abs(span-want)/want > 0.01 {
				t.Errorf("span %.0f ns, HTA kernel_time %.0f ns", span, want)
			}
			byName := map[string]model.KernelSummary{}
			for _, k := range kernels {
				byName[k.Name] = k
			}
			worst, names := 0.0, 0
			defer func() { t.Logf("%d kernel names, largest relative difference %.3f%%", names, 100*worst) }()
			for _, row := range readCSV(t, filepath.Join(refDir, name, "gpu_kernel_breakdown_all.csv")) {
				names++
				want := num(t, row["sum (us)"]) * 1e3
				k, ok := byName[row["name"]]
				if !ok {
					t.Errorf("kernel %.80q: missing (HTA %.0f ns)", row["name"], want)
					continue
				}
				got := float64(k.Total)
				if want != 0 {
					worst = math.Max(worst, math.Abs(got-want)/math.Abs(want))
				}
				if math.Abs(got-want) > 0.01*math.Abs(want) {
					t.Errorf("kernel %.80q: total %.0f ns, HTA %.0f ns", row["name"], got, want)
				}
			}
		})
	}
	if n != 6 {
		t.Errorf("want 6 HTA reference traces, found %d", n)
	}
}

// TestTraceLensAgreement checks the default breakdown's busy and idle shares
// against TraceLens' gpu_timeline.csv within 0.1 percentage points.
//
// TraceLens differs from our whole-trace window in one way: when the trace
// has a ProfilerStep projected onto the GPU (gpu_user_annotation), it only
// counts GPU activity inside that window. The test clips its input the same
// way before computing, so it compares the computation, not the selection.
func TestTraceLensAgreement(t *testing.T) {
	refDir := corpus.Dir(t, "reference/tracelens")
	ents, err := os.ReadDir(refDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			set, err := Load(context.Background(), []string{corpusFile(t, name)}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			clipToGPUSteps(set.Traces[0])
			devs, _ := breakdown.Compute(set, breakdown.WindowTrace)
			var span, busy float64
			var start, end model.Time
			for i, d := range devs {
				if i == 0 || d.Start < start {
					start = d.Start
				}
				if i == 0 || d.End > end {
					end = d.End
				}
				busy += float64(d.Busy)
			}
			span = float64(end - start)
			if len(devs) != 1 {
				t.Skipf("%d devices: TraceLens merges all GPU lanes, we report per device", len(devs))
			}
			ref := map[string]float64{}
			for _, row := range readCSV(t, filepath.Join(refDir, name, "gpu_timeline.csv")) {
				ref[row["type"]] = num(t, row["percent"])
			}
			t.Logf("busy: tracedx %.3f%%, TraceLens %.3f%%", 100*busy/span, ref["busy_time"])
			if got, want := 100*busy/span, ref["busy_time"]; math.Abs(got-want) > 0.1 {
				t.Errorf("busy %.3f%%, TraceLens %.3f%%", got, want)
			}
			if got, want := 100*(span-busy)/span, ref["idle_time"]; math.Abs(got-want) > 0.1 {
				t.Errorf("idle %.3f%%, TraceLens %.3f%%", got, want)
			}
		})
	}
}

// clipToGPUSteps keeps only GPU activity inside the GPU-side ProfilerStep
// annotations, when the trace has any (TraceLens' selection).
func clipToGPUSteps(t *model.Trace) {
	var win []model.Interval
	for _, r := range t.Ranges {
		if r.Kind == model.RangeGPUAnnotation && strings.HasPrefix(t.Str(r.Name), "ProfilerStep#") {
			win = append(win, model.Interval{Start: r.Start, End: r.End})
		}
	}
	if len(win) == 0 {
		return
	}
	in := func(s, e model.Time) (model.Time, model.Time, bool) {
		for _, w := range win {
			if e > w.Start && s < w.End {
				return max(s, w.Start), min(e, w.End), true
			}
		}
		return 0, 0, false
	}
	ks := t.Kernels[:0]
	for _, k := range t.Kernels {
		if s, e, ok := in(k.Start, k.End); ok {
			k.Start, k.End = s, e
			ks = append(ks, k)
		}
	}
	t.Kernels = ks
	ms := t.MemOps[:0]
	for _, m := range t.MemOps {
		if s, e, ok := in(m.Start, m.End); ok {
			m.Start, m.End = s, e
			ms = append(ms, m)
		}
	}
	t.MemOps = ms
}
