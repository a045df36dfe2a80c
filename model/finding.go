package model

import (
	"fmt"
	"math"
	"strings"
)

// Severity orders findings.
type Severity int

// Severities, lowest first.
const (
	SevInfo Severity = iota
	SevWarning
	SevError
)

func (s Severity) String() string {
	switch s {
	case SevInfo:
		return "info"
	case SevWarning:
		return "warning"
	case SevError:
		return "error"
	}
	return "invalid"
}

// ParseSeverity parses "info", "warning" (or "warn") and "error".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "info":
		return SevInfo, nil
	case "warning", "warn":
		return SevWarning, nil
	case "error":
		return SevError, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning or error)", s)
}

// Layer is the layer of the bottleneck map a finding belongs to.
type Layer string

// Layers of the bottleneck map.
const (
	LayerAll         Layer = "all"
	LayerHardware    Layer = "hardware"
	LayerKernel      Layer = "kernel"
	LayerMemory      Layer = "memory"
	LayerScheduling  Layer = "scheduling"
	LayerParallelism Layer = "parallelism"
	LayerApplication Layer = "application"
)

// Confidence says how directly a finding was observed.
type Confidence string

// Confidence levels.
const (
	Measured  Confidence = "measured"  // read directly off the capture
	Inferred  Confidence = "inferred"  // derived from indirect signatures
	Estimated Confidence = "estimated" // computed against assumed numbers
)

// Metric is one named number behind a finding. When the value is a ratio,
// Num and Den hold its numerator and denominator.
type Metric struct {
	Name     string
	Value    float64
	Unit     string // "ns", "%", "count", "GB/s", ...
	Num, Den float64
}

// Evidence points at a place on the timeline.
type Evidence struct {
	Rank   int
	Device DeviceID
	Stream StreamID
	Thread int64 // OS thread id, -1 when none
	Start  Time
	End    Time
	Note   string
	// Cause is the kernel-gap cause word of a gap ("" for other rules).
	Cause string
	// Context names what the host was doing: the innermost meaningful
	// op, range or API call, after the outermost user annotation.
	Context string
	// GPUIdle is how long the device was idle with an empty launch queue
	// during the window (host-blocking rules), valid when GPUIdleKnown.
	GPUIdle      Duration
	GPUIdleKnown bool
}

// Finding is one diagnosed problem (or an informational observation).
type Finding struct {
	Rule           string
	Severity       Severity
	Layer          Layer
	Title          string
	Message        string
	Recommendation string
	Confidence     Confidence
	Metrics        []Metric
	Evidence       []Evidence
	// Ranks lists, for a finding grouped across ranks, the ranks it fired
	// on (ascending); its metrics then hold the worst rank's figures under
	// their own names and every rank's as "rank<R>_<name>", and its evidence
	// one item per rank. A job-level finding with per-rank figures (the
	// straggler) lists every rank the same way. Nil for a finding of one rank.
	Ranks []int
}

// RankMetric returns a grouped finding's metric for one rank.
func (f *Finding) RankMetric(rank int, name string) (Metric, bool) {
	return f.Metric(RankMetricName(rank, name))
}

// RankMetricName is the name of a grouped finding's per-rank metric.
func RankMetricName(rank int, name string) string { return fmt.Sprintf("rank%d_%s", rank, name) }

// Metric returns the metric with the given name.
func (f *Finding) Metric(name string) (Metric, bool) {
	for _, m := range f.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// SumOverRanks returns a metric summed over the ranks of a grouped finding
// (its rank<R>_<name> metrics), or the metric itself for other findings.
func (f *Finding) SumOverRanks(name string) (float64, bool) {
	m, ok := f.Metric(name)
	if !ok || len(f.Ranks) == 0 {
		return m.Value, ok
	}
	var sum float64
	found := false
	for _, r := range f.Ranks {
		if rm, ok := f.RankMetric(r, name); ok && !math.IsNaN(rm.Value) {
			sum, found = sum+rm.Value, true
		}
	}
	if !found {
		return m.Value, true
	}
	return sum, true
}

// costMetrics name, in order of preference, the metric that says how much
// time a finding costs.
var costMetrics = []string{"gap_total_ns", "exposed_comm_ns", "wait_caused_ns", "wait_ns", "gpu_idle_overlap", "blocked_time", "stall_time", "copy_time"}

// Cost returns the time a finding costs: its preferred ns metric (summed
// over the ranks of a grouped finding), else the length of its evidence
// windows.
func (f *Finding) Cost() Duration {
	for _, name := range costMetrics {
		if v, ok := f.SumOverRanks(name); ok && !math.IsNaN(v) {
			return Duration(v)
		}
	}
	var d Duration
	for _, e := range f.Evidence {
		if e.End > e.Start {
			d += e.End.Sub(e.Start)
		}
	}
	return d
}

// Kind names the kind of finding within its rule: the rule and the first
// metric's name (findings of one kind share their metrics), else the rule.
// Renderers and the cross-rank grouping put findings of one kind together.
func (f *Finding) Kind() string {
	if len(f.Metrics) > 0 {
		return f.Rule + "\x00" + f.Metrics[0].Name
	}
	return f.Rule
}
