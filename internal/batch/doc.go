// Package batch is the engine of `tracedx batch`: it expands inputs (files,
// folders, manifests), keeps this shard's share, analyses each input on a
// bounded pool of workers, writes one report per input, and finally the
// combined Parquet dataset, the JUnit file and a summary.
//
// Place in the pipeline: cmd/tracedx (flags, wiring) → batch → {policy,
// export/parquet, export/junit} → model. The analysis and the report
// renderer are injected (Config.Analyze, Config.Render), so this package
// never imports importers or detectors and is tested with fakes.
//
// Files under the output folder DIR:
//
//	reports/<name>.md, reports/<name>.json   one report per input
//	state/<name>.json                        per-input state, written last
//	state/<name>.rows.json                   the input's dataset rows
//	dataset/<table>[-shard-i-of-n].parquet   the combined dataset
//	junit[-shard-i-of-n].xml                 one test suite per input
//
// Every file is written atomically (temporary file + rename). An input is
// done when its state file names the digest (sha256) of its bytes and the
// fingerprint of the run's settings; a rerun skips done inputs, so a killed
// batch resumes without redoing or corrupting anything. The dataset is
// rebuilt from the rows files at the end of every run, in input order, so
// its content does not depend on worker timing or on resumption.
//
// Memory: one trace per worker in flight; rows go to disk as soon as an
// input is done and the dataset is streamed from them.
package batch
