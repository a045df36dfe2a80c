// Package parquet writes the combined batch dataset of tracedx: four
// Parquet tables (inputs, metrics, findings, kernels) that DuckDB, Spark or
// pandas read directly. docs/dataset.md documents every column.
//
// Place in the pipeline: cmd (batch) → export/parquet → model. The package
// never computes findings or metrics: callers hand it rows (RowsFromReport
// converts a report; metric samples come from the policy package's
// namespace).
//
// Layout: each table's Arrow schema is defined once (schemas.go); rows are
// appended to one builder per column; repeated names (inputs, rules,
// metrics, kernel names, devices, enums) are dictionary-encoded. Rows are
// flushed as record batches of at most FlushRows rows, so memory is bounded
// by a batch, not by the dataset. Each table is written to a temporary file
// in the target folder and renamed into place by Close, so a reader never
// sees a half-written table.
//
// Units: times are int64 nanoseconds (columns named *_ns), sizes bytes.
package parquet
