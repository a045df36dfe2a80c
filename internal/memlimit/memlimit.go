// Package memlimit gives the Go runtime a soft memory limit from the
// machine's memory, so that a large trace makes the garbage collector work
// harder as memory runs short instead of the process being killed.
//
// Go sizes its heap at twice the live data by default (GOGC=100). A 10 GB
// trace whose analysis keeps 6 GB live would grow to 12 GB and die on a
// 16 GB laptop although the live data fit. With a limit of most of the
// available memory the collector keeps the heap below it, at the price of
// more collections only when the limit is near; far from it nothing changes.
// GOMEMLIMIT set in the environment always wins.
package memlimit

import (
	"os"
	"runtime/debug"
)

// Fraction is the share of the machine's (or the cgroup's) memory the heap
// may use before the collector works harder: the rest is left to the
// non-heap runtime, SQLite's page cache and other processes.
const Fraction = 0.75

// Apply sets the soft memory limit to Fraction of the available memory
// unless GOMEMLIMIT is set or the memory is unknown. It returns the limit
// set (0 = none).
func Apply() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	total := available()
	if total <= 0 {
		return 0
	}
	limit := int64(float64(total) * Fraction)
	debug.SetMemoryLimit(limit)
	return limit
}
