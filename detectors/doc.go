// Package detectors defines what a detector is (a described value with a
// stable ID, docs, default parameters, the capabilities it needs and a run
// function), runs a list of them over a TraceSet, and holds the interval and
// classification helpers detectors share. Detector implementations live in
// sub-packages; package all is the explicit registry.
//
// Pipeline place: cmd → detectors → model. Detectors never print and never
// import importers or exporters. A detector that lacks its inputs reports
// "not measurable" rather than a zero.
package detectors
