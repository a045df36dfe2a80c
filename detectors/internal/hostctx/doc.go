// Package hostctx holds the host-side context that the scheduling and memory
// detectors (gil-stall, sync-api, memcpy) share: the activity span and its
// steady-state window, the innermost enclosing range of a host call, API calls
// indexed by correlation, and per-process GPU idle time.
//
// Pipeline place: detectors/<rule> → hostctx → model. Times are int64 ns on
// the trace's own clock. Owned by the host-stall detectors; other detectors
// may use it.
package hostctx
