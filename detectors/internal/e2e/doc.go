// Package e2e holds end-to-end tests of the host-stall detectors (gil-stall,
// sync-api, memcpy): a planted fault is written as a real Nsight Systems
// SQLite export (internal/nsysgen) or Kineto JSON file (internal/kinetogen),
// imported by the production importer and analysed by the detector, so that
// importer and detector agree on the model.
//
// Pipeline place: test only; nothing imports this package. It sits under
// detectors/internal so that the detector packages themselves keep to their
// one-way dependency on the model.
package e2e
