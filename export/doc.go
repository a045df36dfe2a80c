// Package export renders a model.Report: a terminal summary ("text"),
// ticket-ready Markdown ("md") and the versioned JSON wire form ("json",
// schema_version "1"). It also writes output files atomically. Renderers
// never compute findings; they only format what the report holds, and the
// same report always renders to the same bytes.
//
// Place in the pipeline: cmd → export → model.
package export
