package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	impall "github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/gcbudget"
	"github.com/tracedx/tracedx/model"
)

// Memory limits. tracedx holds a trace's timeline in memory: at its peak a
// run takes less than a Kineto JSON trace's uncompressed size (about 0.45x)
// and somewhat more than an Nsight SQLite file (about 1.4x; see
// docs/performance.md). Two things follow:
//
//   - a soft limit for the Go collector (debug.SetMemoryLimit) so that the
//     heap is collected harder before the machine's limit is reached:
//     GOMEMLIMIT when set (the runtime reads it; tracedx leaves it alone),
//     else half of RLIMIT_AS (ulimit -v: the runtime's own address space
//     counts too) or three quarters of the cgroup's memory.max or of the
//     physical memory, whichever is smallest; analyze, diff, export and info
//     then set it to their inputs' budget, this being its ceiling
//     (startMemBudget);
//   - inputs whose uncompressed size is above the limit are refused before
//     reading, with one line and exit 3 (a resource error, like a full
//     disk), instead of a runtime dump once an allocation fails.
//
// ulimit -v limits address space, not memory: the Go runtime reserves
// address space well beyond the heap, and below about 2 GB (1.5 GB: 2 runs
// of the small bundled example in 8 died in the runtime) even small inputs
// can fail there. Prefer a cgroup limit or GOMEMLIMIT.

// memLimit is the memory tracedx may use and where that limit comes from.
type memLimit struct {
	Bytes  int64  // 0: unknown
	Source string // "ulimit -v", "cgroup memory limit", "physical memory"
	Soft   int64  // the collector's target derived from it
	// SoftFrom says where Soft comes from: "GOMEMLIMIT" or "".
	SoftFrom string
}

// hostMemLimit reads the smallest of the process's limits.
func hostMemLimit() memLimit {
	var m memLimit
	consider := func(b int64, src string, num, den int64) {
		if b <= 0 {
			return
		}
		if m.Bytes == 0 || b < m.Bytes {
			m = memLimit{Bytes: b, Source: src, Soft: b / den * num}
		}
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err == nil && rl.Cur < 1<<62 /* not RLIM_INFINITY */ {
		consider(int64(rl.Cur), "ulimit -v", 1, 2)
	}
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if data, err := os.ReadFile(f); err == nil {
			if b, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && b < 1<<62 {
				consider(b, "cgroup memory limit", 3, 4)
			}
		}
	}
	consider(physicalMemory(), "physical memory", 3, 4)
	return m
}

// setSoftMemoryLimit applies the collector's soft limit unless GOMEMLIMIT
// is set; it returns the limit in force.
func setSoftMemoryLimit() memLimit {
	m := hostMemLimit()
	if os.Getenv("GOMEMLIMIT") != "" {
		m.Soft, m.SoftFrom = debug.SetMemoryLimit(-1), "GOMEMLIMIT" // the runtime already applied it
		return m
	}
	if m.Soft > 0 {
		debug.SetMemoryLimit(m.Soft)
	}
	return m
}

// Memory budgets per input byte: the peak memory tracedx aims at, as a
// share of an input's size (uncompressed for gzip). The collector's soft
// limit is set to the budget of the run's inputs (gcbudget), and raised
// above it only by what the live data need. The shares are the targets of
// docs/performance.md: a Kineto trace's timeline is a fraction of its JSON
// text; an Nsight export's rows are about as large in memory as on disk
// (and SQLite's own cache is outside the Go heap).
const (
	budgetJSON   = 0.40
	budgetSQLite = 1.25
	// budgetFloor is the least budget: logs and small traces need little,
	// and below this the collector would run for nothing.
	budgetFloor = 96 << 20
)

// memBudget is the budget of a run over files.
func memBudget(files []string) int64 {
	var b float64
	for _, f := range files {
		if share := budgetShare(f); share > 0 {
			b += share * float64(inputFootprint(f))
		}
	}
	return max(int64(b), budgetFloor)
}

// budgetShare is the share of an input's (uncompressed) size that its
// budget is, by its format: 0 for logs, which tracedx reads in bounded
// memory whatever their size, and for inputs of no known format.
func budgetShare(path string) float64 {
	switch detectFormat(path) {
	case model.FormatNsys:
		return budgetSQLite
	case model.FormatKineto:
		return budgetJSON
	}
	return 0
}

// detectFormat is the format of path as the importers detect it, "" when
// none does or path is not a regular file (never open a FIFO or a device
// here: opening may block).
func detectFormat(path string) model.Format {
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	imp, err := impall.Registry().Detect(path)
	if err != nil {
		return ""
	}
	return imp.Format()
}

// startMemBudget sets the collector's soft limit to budget, the inputs'
// (see gcbudget), unless GOMEMLIMIT is set: the user's choice stands.
// With --max-memory, live data above it stop the command (exit 3).
func (g *globalOpts) startMemBudget(files []string, budget int64) {
	if g.stopBudget != nil {
		return
	}
	b, ceiling, max := budget, g.Mem.Soft, int64(g.MaxMemory)
	if max > 0 && (ceiling <= 0 || max < ceiling) {
		ceiling = max
	}
	over := func(live int64) {
		if g.cancel != nil {
			g.cancel(&exitError{code: exitOutput, err: fmt.Errorf("%s: the trace's data took %s of memory, above --max-memory %s (%w); raise it, or split the trace",
				inputsName(files), humanSize(live), humanSize(max), syscall.ENOMEM)})
		}
	}
	if g.Mem.SoftFrom == "GOMEMLIMIT" {
		if max <= 0 {
			return // the user's limit stands
		}
		b = debug.SetMemoryLimit(-1)
		ceiling = b
	}
	g.stopBudget = gcbudget.Start(b, ceiling, max, over)
	g.debug("memory budget for the inputs: %s (the collector's soft limit, raised when the live data need more)", humanSize(b))
}

// addMaxMemoryFlag adds --max-memory to a command that reads traces.
func addMaxMemoryFlag(c *cobra.Command, g *globalOpts) {
	c.Flags().Var(&g.MaxMemory, "max-memory", "stop with an error (exit 3) as soon as the trace's data need more memory than this (e.g. 4GiB, 500MB; 0: no limit) instead of being killed by the system")
}

// byteSize is a --max-memory value: bytes, with an optional unit (K, M, G,
// T: powers of 1000, or KiB, MiB, GiB, TiB: of 1024; a trailing B is
// optional).
type byteSize int64

func (s *byteSize) String() string {
	if *s == 0 {
		return "0"
	}
	return humanSize(int64(*s))
}

func (s *byteSize) Type() string { return "size" }

func (s *byteSize) Set(v string) error {
	t := strings.TrimSpace(v)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToUpper(strings.TrimSpace(t[len(num):]))
	mult := map[string]float64{"": 1, "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
		"KI": 1 << 10, "KIB": 1 << 10, "MI": 1 << 20, "MIB": 1 << 20, "GI": 1 << 30, "GIB": 1 << 30, "TI": 1 << 40, "TIB": 1 << 40}[unit]
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || n < 0 || n*mult >= 1<<62 {
		return fmt.Errorf("%q is not a size (e.g. 4GiB, 500MB, 0 for none)", v)
	}
	if b := n * mult; b > 0 && b < 64<<20 {
		return fmt.Errorf("%q is below the least tracedx runs in (64 MiB)", v)
	}
	*s = byteSize(n * mult)
	return nil
}

// stopMemBudget puts back the soft limit that was in force before.
func (g *globalOpts) stopMemBudget() {
	if g.stopBudget != nil {
		g.stopBudget()
		g.stopBudget = nil
	}
}

// checkMax refuses inputs whose budget alone (the least they take, by
// their kind and size: memBudget) is above --max-memory.
func (g *globalOpts) checkMax(files []string, need int64) error {
	max := int64(g.MaxMemory)
	if max <= 0 {
		return nil
	}
	if need > max && need > budgetFloor {
		return &exitError{code: exitOutput, err: fmt.Errorf("%s: needs at least %s of memory, above --max-memory %s (%w); raise it, or split the trace",
			inputsName(files), humanSize(need), humanSize(max), syscall.ENOMEM)}
	}
	return nil
}

// inputsName names the inputs of a run in a message: the file, or "N inputs".
func inputsName(files []string) string {
	if len(files) == 1 {
		return files[0]
	}
	return fmt.Sprintf("%d inputs", len(files))
}

// checkFits refuses inputs that together cannot fit in the limit, judged
// by their uncompressed size (what a run takes is a fraction of it to
// about 1.4 times it, by format: see above).
func (m memLimit) checkFits(files []string) error {
	if m.Bytes <= 0 {
		return nil
	}
	var need int64
	for _, f := range files {
		need += inputFootprint(f)
	}
	if need <= m.Bytes {
		return nil
	}
	return &exitError{code: exitOutput, err: fmt.Errorf("%s: about %s to hold in memory, above the %s of %s (%w); raise the limit, or split the trace",
		inputsName(files), humanSize(need), m.Source, humanSize(m.Bytes), syscall.ENOMEM)}
}

// inputFootprint estimates the memory an input's timeline takes: its size,
// or for gzip its uncompressed size (the trailer's ISIZE, at least the
// compressed size: ISIZE wraps at 4 GiB).
func inputFootprint(path string) int64 {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0 // never open a FIFO or a device here: opening may block
	}
	size := st.Size()
	f, err := os.Open(path)
	if err != nil {
		return size
	}
	defer f.Close()
	var head [2]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || head != [2]byte{0x1f, 0x8b} || size < 18 {
		return size
	}
	var tail [4]byte
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return size
	}
	return max(size, int64(binary.LittleEndian.Uint32(tail[:])))
}

func humanSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", b)
}
