// Package kinetogen writes a model.Trace as PyTorch Profiler (Kineto) trace
// JSON. Tests plant faults in model form (internal/fixture or an importer's
// output) and get a real Kineto file back, in any of the layouts the importer
// must read: bare array or object, header keys before or after traceEvents,
// the three timestamp encodings, 2020–21 legacy names, gzip, with or without
// process/thread metadata.
//
// Pipeline place: test helper only (model → Kineto JSON); importers/kineto
// reads what it writes. Units: model times are int64 ns; the JSON carries µs
// as the chosen Layout says. Output is deterministic: the same trace and
// layout always give the same bytes.
package kinetogen
