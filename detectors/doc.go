// Package detectors defines what a detector is (a described value with a
// stable ID, docs, default parameters, the capabilities it needs and a run
// function), runs a list of them over a TraceSet, and holds what several
// detectors share, one file per idea:
//
//   - interval.go: interval algebra (Union, Intersect, Subtract, Gaps, Overlap);
//   - activity.go: GPU activities merged and classified (model.ClassifyKernel);
//   - corr.go: API calls indexed by correlation (launch ↔ GPU activity);
//   - encloser.go: the innermost host range around a host call;
//   - window.go: host span, steady-state window and step windows;
//   - format.go: numbers and thread names in messages.
//
// Helpers used by one rule stay in that rule's package. Detector
// implementations live in sub-packages; package all is the explicit registry.
//
// Pipeline place: cmd → detectors → model. Detectors never print and never
// import importers or exporters. A detector that lacks its inputs reports
// "not measurable" rather than a zero.
package detectors
