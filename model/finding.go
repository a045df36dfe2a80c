package model

import (
	"fmt"
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
}

// Metric returns the metric with the given name.
func (f *Finding) Metric(name string) (Metric, bool) {
	for _, m := range f.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
