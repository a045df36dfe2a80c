// Package timeline writes the normalized timeline of a trace (or of a job's
// set of traces) as Apache Arrow IPC files or Parquet files, one table per
// kind of event: kernels, memops, api_calls, ranges, collectives, counters,
// syncs, os_calls, gil and memory (allocator events). It is what
// `tracedx export --to arrow|parquet` writes, for tools (DuckDB, pandas,
// Polars, Spark) that want the events themselves rather than tracedx's
// findings.
//
// Place in the pipeline: importers → model → here. It reads a finalized
// model.Trace / model.TraceSet and never computes findings. The batch dataset
// tables (inputs, metrics, findings, kernel summaries) live in export/parquet;
// this package holds per-event rows.
//
// Units: every time column is int64 nanoseconds on the trace's own clock plus
// the set's offset for that rank (TraceSet.Offsets); dur_ns = end_ns - start_ns.
// Sentinels of the model (NoDevice, NoStream, NoThread, NoRank, bytes -1,
// seq -1, the empty string) become nulls.
//
// Layout: each table's schema is defined once, as a list of columns (see
// tables.go); each column owns one Arrow builder. String columns are
// dictionary-encoded (int32 indices into utf8); the dictionary is collected in
// a first pass so that every record batch of a file shares it, which the Arrow
// IPC file format requires. Rows are written in batches of Options.BatchRows.
// Files are written atomically (temporary file in the same directory, then
// rename).
//
// docs/timeline.md is generated from the column list here (SchemaMarkdown)
// and checked by a test.
package timeline
