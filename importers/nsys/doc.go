// Package nsys imports Nsight Systems SQLite exports (nsys export --type
// sqlite, versions 2020.3 to 2026.x) into the common timeline model.
//
// Pipeline place: cmd → importers/nsys → model. This is the only importer
// that uses SQLite (github.com/mattn/go-sqlite3).
//
// Safety: an export is evidence and may be hostile. It is opened read-only
// and immutable (file:PATH?mode=ro&immutable=1), with trusted_schema=OFF,
// query_only=ON and no extensions; only objects of type 'table' are read, and
// every column is selected by name after PRAGMA table_info, because tables
// exist only when they had data and columns were added and renamed across
// versions. A file that is not an SQLite database is refused with an
// importers.InputError at "byte 0".
//
// Layers: raw.go, read.go, sqlite.go, fast.go and scanpar.go are the raw
// layer (one typed row struct per table, scanned into reused variables);
// the builder turns rows into the model, one file per table family
// (build.go: state, strings, enums, metadata; build_devices.go: devices,
// processes, threads; build_cuda.go: CUDA activity; build_host.go: NVTX,
// OS runtime, GIL; build_metrics.go: GPU metrics and memory usage;
// build_finish.go: the post-pass), and is driven by FuzzBuild without
// SQLite. No SQL range joins: tables are read one by one in table order
// (which is start order in real exports), correlations are joined in Go on
// (pid, correlationId) and the model's Finalize sorts by start.
//
// Speed: text-bearing tables go through go-sqlite3's driver interface (no
// database/sql reflection). Integer-only tables (KERNEL, RUNTIME, MEMCPY,
// ...) use fast.go: a second raw handle on the same file through the SQLite C
// API that go-sqlite3 links into the binary, stepping thousands of rows per
// cgo call into a reused []int64 (no per-cell boxing). Tables above
// parallelAbove rows are read in rowid ranges by GOMAXPROCS connections and
// consumed in rowid order, so the output does not depend on timing.
//
// Units: times stay as the export has them, int64 nanoseconds on the session
// timeline (they may be negative); Trace.Clock.Origin is the session start
// (TARGET_INFO_SESSION_START_TIME.utcEpochNs) when the export has it.
// CorrScope of kernels, copies, syncs and API calls is the process id.
// Device ids are system-wide CUDA ordinals (TARGET_INFO_GPU.cuDevice).
//
// Ownership: Import returns a finalized trace that the caller owns.
package nsys
