package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Sample is one value of a metric. A metric may have several samples (one
// per device, per finding or per benchmark run); Scope says which.
type Sample struct {
	Name  string
	Scope string // "" for report-wide values, e.g. "rank0/gpu1", "all_reduce run 1"
	// Device is the device the sample belongs to ("rank0/gpu1"), "" when none.
	Device string
	Value  float64
}

// metricPrefixes are the roots of the metric namespace (docs/policy.md).
var metricPrefixes = []string{"gpu.", "kernels.", "findings.", "finding.", "nccl.", "warnings.", "inputs."}

// ValidMetricName reports whether name lies in the documented namespace.
func ValidMetricName(name string) bool {
	if strings.ContainsAny(name, " \t") {
		return false
	}
	for _, p := range metricPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return true
		}
	}
	return false
}

// DeviceScope names a device the way metrics and the dataset do:
// "rank0/gpu1", or "gpu1" when the rank is unknown.
func DeviceScope(rank int, dev model.DeviceID) string {
	if rank < 0 {
		return fmt.Sprintf("gpu%d", dev)
	}
	return fmt.Sprintf("rank%d/gpu%d", rank, dev)
}

func pct(num, den model.Duration) float64 { return 100 * float64(num) / float64(den) }
func ms(d model.Duration) float64         { return float64(d) / 1e6 }

// Metrics computes every metric of the namespace that r can answer, in a
// deterministic order. A metric the report cannot answer is absent (never 0).
func Metrics(r *model.Report) []Sample {
	s := &samples{}
	s.add("inputs.count", "", float64(len(r.Inputs)))
	s.devices(r)
	s.kernels(r)
	s.findingCounts(r)
	s.ruleCounts(r)
	s.findingMetrics(r)
	s.bench(r)
	// Import warnings are always measurable.
	s.add("warnings.count", "", float64(len(r.Warnings)))
	return s.out
}

// samples collects Metrics' output in order.
type samples struct{ out []Sample }

func (s *samples) add(name, scope string, v float64) {
	s.out = append(s.out, Sample{Name: name, Scope: scope, Value: v})
}

func (s *samples) addDev(name, dev, scope string, v float64) {
	s.out = append(s.out, Sample{Name: name, Scope: scope, Device: dev, Value: v})
}

// devices adds the GPU time breakdown, per device.
func (s *samples) devices(r *model.Report) {
	for _, d := range r.Devices {
		sc := DeviceScope(d.Rank, d.Device)
		s.addDev("gpu.span_ms", sc, sc, ms(d.Span))
		s.addDev("gpu.busy_ms", sc, sc, ms(d.Busy))
		s.addDev("gpu.idle_ms", sc, sc, ms(d.Idle))
		s.addDev("gpu.compute_ms", sc, sc, ms(d.Compute))
		s.addDev("gpu.communication_ms", sc, sc, ms(d.Communication))
		s.addDev("gpu.memory_ms", sc, sc, ms(d.Memory))
		if d.Span > 0 {
			s.addDev("gpu.busy_pct", sc, sc, pct(d.Busy, d.Span))
			s.addDev("gpu.idle_pct", sc, sc, pct(d.Idle, d.Span))
			s.addDev("gpu.compute_pct", sc, sc, pct(d.Compute, d.Span))
			s.addDev("gpu.communication_pct", sc, sc, pct(d.Communication, d.Span))
			s.addDev("gpu.memory_pct", sc, sc, pct(d.Memory, d.Span))
			s.addDev("gpu.noncompute_pct", sc, sc, pct(d.NonCompute, d.Span))
		}
		s.addDev("gpu.kernels", sc, sc, float64(d.Kernels))
		s.addDev("gpu.memops", sc, sc, float64(d.MemOps))
	}
}

// kernels adds the kernel summaries, only when the capture has kernels.
func (s *samples) kernels(r *model.Report) {
	if len(r.Kernels) > 0 {
		var n int64
		var total model.Duration
		for _, k := range r.Kernels {
			n += k.Count
			total += k.Total
		}
		s.add("kernels.count", "", float64(n))
		s.add("kernels.distinct", "", float64(len(r.Kernels)))
		s.add("kernels.total_ms", "", ms(total))
	}
}

// findingCounts adds the counts by severity, always measurable.
func (s *samples) findingCounts(r *model.Report) {
	var bySev [3]int
	for _, f := range r.Findings {
		if f.Severity >= model.SevInfo && f.Severity <= model.SevError {
			bySev[f.Severity]++
		}
	}
	s.add("findings.total", "", float64(len(r.Findings)))
	s.add("findings.error", "", float64(bySev[model.SevError]))
	s.add("findings.warning", "", float64(bySev[model.SevWarning]))
	s.add("findings.info", "", float64(bySev[model.SevInfo]))
}

// ruleCounts adds a count per rule, absent when the rule was not
// measurable and found nothing.
func (s *samples) ruleCounts(r *model.Report) {
	notMeas := map[string]bool{}
	for _, nm := range r.NotMeasurable {
		notMeas[nm.Rule] = true
	}
	count := map[string]int{}
	for _, f := range r.Findings {
		if m, grouped := f.Metric("ranks_affected"); grouped {
			count[f.Rule] += int(m.Value) // one finding per rank, as before grouping
			continue
		}
		count[f.Rule]++
	}
	rules := map[string]bool{}
	for rule := range count {
		rules[rule] = true
	}
	for rule := range notMeas {
		rules[rule] = true
	}
	var ruleIDs []string
	for rule := range rules {
		ruleIDs = append(ruleIDs, rule)
	}
	sort.Strings(ruleIDs)
	for _, rule := range ruleIDs {
		if count[rule] == 0 && notMeas[rule] {
			continue
		}
		s.add("finding."+rule+".count", "", float64(count[rule]))
	}
}

// findingMetrics adds each finding's metrics, scoped to the finding (or
// per rank for a finding grouped over ranks).
func (s *samples) findingMetrics(r *model.Report) {
	seq := map[string]int{}
	for i := range r.Findings {
		f := &r.Findings[i]
		if len(f.Ranks) > 0 && s.perRank(f, seq) {
			continue
		}
		seq[f.Rule]++
		sc := findingScope(f, seq[f.Rule])
		dev := ""
		if len(f.Evidence) > 0 && f.Evidence[0].Device != model.NoDevice {
			dev = DeviceScope(f.Evidence[0].Rank, f.Evidence[0].Device)
		}
		for _, m := range f.Metrics {
			s.addDev("finding."+f.Rule+"."+metricKey(m.Name), dev, sc, m.Value)
		}
	}
}

// bench adds the nccl-tests benchmark results, per run.
func (s *samples) bench(r *model.Report) {
	for _, ib := range r.Bench {
		if ib.Bench == nil {
			continue
		}
		runs := map[string]int{}
		for _, run := range ib.Bench.Runs {
			coll := metricKey(strings.TrimSuffix(run.Collective, "_perf"))
			if coll == "" {
				coll = "unknown"
			}
			runs[coll]++
			sc := fmt.Sprintf("%s %s run %d", ib.Path, coll, runs[coll])
			if len(r.Bench) == 1 {
				sc = fmt.Sprintf("%s run %d", coll, runs[coll])
			}
			var peakBus, peakAlg float64
			var wrong int64
			any := false
			for _, row := range run.Rows {
				for _, res := range []model.BenchResult{row.OutOfPlace, row.InPlace} {
					if !res.Present {
						continue
					}
					any = true
					peakBus = max(peakBus, res.BusBWGBps)
					peakAlg = max(peakAlg, res.AlgBWGBps)
					if res.Wrong > 0 {
						wrong += res.Wrong
					}
				}
			}
			pre := "nccl." + coll + "."
			s.add(pre+"rows", sc, float64(len(run.Rows)))
			if any {
				s.add(pre+"peak_busbw_gbps", sc, peakBus)
				s.add(pre+"peak_algbw_gbps", sc, peakAlg)
				s.add(pre+"wrong", sc, float64(wrong))
				s.add("nccl.peak_busbw_gbps", sc, peakBus)
				s.add("nccl.wrong", sc, float64(wrong))
			}
			if run.ReportedAvgBusBW >= 0 {
				s.add(pre+"avg_busbw_gbps", sc, run.ReportedAvgBusBW)
			}
		}
	}
}

// perRank gives a finding grouped across ranks (it has
// ranks_affected) one set of samples per rank: its rank<R>_ metrics under
// their plain names, scoped to the rank's evidence, as if the ranks' findings
// had not been grouped, so gates keep seeing every rank. It returns false,
// emitting nothing, for other findings (the job-level straggler) or when a
// rank has no device evidence.
func (s *samples) perRank(f *model.Finding, seq map[string]int) bool {
	if _, grouped := f.Metric("ranks_affected"); !grouped {
		return false
	}
	devs := make([]string, len(f.Ranks))
	for k, rank := range f.Ranks {
		for _, e := range f.Evidence {
			if e.Rank == rank && e.Device != model.NoDevice {
				devs[k] = DeviceScope(rank, e.Device)
				break
			}
		}
		if devs[k] == "" {
			return false
		}
	}
	for k, rank := range f.Ranks {
		prefix := model.RankMetricName(rank, "")
		seq[f.Rule]++
		sc := fmt.Sprintf("%s #%d", devs[k], seq[f.Rule])
		for _, m := range f.Metrics {
			if strings.HasPrefix(m.Name, prefix) {
				s.addDev("finding."+f.Rule+"."+metricKey(strings.TrimPrefix(m.Name, prefix)), devs[k], sc, m.Value)
			}
		}
	}
	return true
}

func findingScope(f *model.Finding, n int) string {
	if len(f.Evidence) > 0 {
		e := f.Evidence[0]
		if e.Device != model.NoDevice {
			return fmt.Sprintf("%s #%d", DeviceScope(e.Rank, e.Device), n)
		}
		if e.Rank >= 0 {
			return fmt.Sprintf("rank%d #%d", e.Rank, n)
		}
	}
	return fmt.Sprintf("#%d", n)
}

// metricKey lowercases a name and keeps [a-z0-9_-], mapping anything else to '_'.
func metricKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}
