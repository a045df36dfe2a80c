// Command tracedx reads GPU performance traces after the fact (Nsight Systems
// SQLite exports, PyTorch Profiler / Kineto JSON, nccl-tests logs) and says,
// with evidence, why the job is slow.
//
// This package is thin: cobra commands that wire importers → detectors →
// exporters through internal/pipeline, and the one place where errors become
// exit codes (0 ok, 1 gate failed, 2 bad input or usage).
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
