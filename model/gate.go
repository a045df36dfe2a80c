package model

// GateResult is the outcome of one policy gate condition on one report
// (package policy evaluates gates; renderers such as JUnit print results).
type GateResult struct {
	// Condition is the gate as text ("gpu.idle_pct <= 20"); Name its label.
	Condition string
	Name      string
	Metric    string
	// Measured is the deciding sample: the violating one farthest outside
	// the limit when the gate failed, else the one closest to the limit.
	Measured float64
	// Scope names the sample's device, finding or run ("" report-wide).
	Scope string
	// Limit is the limit Measured was compared with.
	Limit float64
	// Measurable is false when the report has no sample of the metric.
	Measurable bool
	Passed     bool
	// Skipped is true for an optional gate whose metric is not measurable.
	Skipped bool
	Message string
	Line    int
}
