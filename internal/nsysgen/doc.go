// Package nsysgen writes small databases in the Nsight Systems SQLite export
// schema for tests: from readable .sql text (CREATE TABLE and INSERT
// statements in the export's real table and column names), and, for
// benchmarks, large synthetic exports generated inside SQLite.
//
// Pipeline place: test tooling only (importers/nsys tests and benchmarks);
// nothing in the shipped binary imports it. It uses go-sqlite3 to write the
// files; the importer is the only production package that uses it.
package nsysgen
