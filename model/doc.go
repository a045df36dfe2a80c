// Package model is the common timeline that every importer produces and every
// detector and exporter reads: devices, streams, threads, kernels, memory
// operations, API calls, ranges, collectives, counters and memory events, plus
// what the capture could observe (Capabilities) and what went wrong while
// reading it (Warnings).
//
// Units: every Time and Duration is an int64 count of nanoseconds. A Trace keeps
// its clock origin so that traces of different ranks can be aligned.
//
// Layout: event tables are slices of compact, pointer-free records, sorted by
// Start (ties broken by track and end) once the importer calls Finalize. Names
// and other repeated strings are interned in the trace's StringTable and held
// as StringID. Cold data (call chains, metadata) lives beside the tables.
//
// Ownership: importers build a Trace and call Finalize; after that the trace is
// read-only and may be shared by detectors running concurrently.
//
// This package also holds the analysis result types (Finding, Report) that
// detectors produce and exporters render; it imports nothing of the project.
package model
