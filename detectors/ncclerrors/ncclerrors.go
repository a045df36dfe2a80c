package ncclerrors

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the nccl-errors rule.
var Detector = &detectors.Detector{
	ID:       "nccl-errors",
	Title:    "nccl-tests failures, wrong results, hangs and broken runs",
	Layer:    model.LayerParallelism,
	Severity: model.SevError,
	Formats:  []model.Format{model.FormatNCCLTests},
	Params: []detectors.Param{
		{Name: "max_warn_examples", Default: 3, Unit: "count", Doc: "how many distinct NCCL WARN messages a finding quotes"},
	},
	Doc: `Reads nccl-tests / rccl-tests logs for everything that makes their numbers
untrustworthy or shows the job failing:

- wrong results: rows with #wrong > 0 (v2.13+ count of wrong elements) and
  "Out of bounds values : N FAILED" (error). The pre-2.13 "error" column is a max
  deviation; values like 1e-07 are float noise and are not flagged;
- failures: "Test NCCL failure", "Test CUDA failure", "Test timeout", old
  "NCCL failure x.cu:N", launcher aborts (mpirun, srun, PMI, "start failed on")
  (error), with the first NCCL WARN lines as the likely cause;
- NCCL WARN lines (warning) and "Avg bus bandwidth ... FAILED" (NCCL_TESTS_MIN_BW
  not met, warning);
- hangs and truncation: a run that printed its header but never its table, a
  table header with no rows, or rows that stop before the footer (error);
- independent single-rank runs: several processes each printing their own
  header and "Rank 0" (nccl-tests not built with MPI=1, or MPI broken), or a
  sequence of identical one-rank runs on different hosts (warning).

## How to fix
- #wrong / Out of bounds FAILED: a real data corruption or a broken P2P/RDMA
  path; re-run with NCCL_P2P_DISABLE=1 or NCCL_NET_GDR_LEVEL=LOC to locate it,
  check GPU memory (ECC, nvidia-smi -q -d ECC) and NIC firmware.
- Test NCCL failure: read the NCCL WARN lines before it (run with
  NCCL_DEBUG=INFO); common causes are /dev/shm too small in containers
  (--ipc=host or --shm-size), an NCCL/CUDA version mismatch, GPU memory
  exhaustion (lower -e), and socket/IB connection errors (NCCL_SOCKET_IFNAME,
  NCCL_IB_GID_INDEX, NCCL_CROSS_NIC).
- Hangs: look at the last INFO phase (Init COMPLETE, Connected all rings);
  add -T (timeout) to nccl-tests and NCCL_DEBUG=INFO to see where it stops.
- Independent runs: rebuild nccl-tests with MPI=1 MPI_HOME=... and launch with
  mpirun/srun so that all processes join one communicator.
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	maxEx := int(p.Param("max_warn_examples"))
	looked := false
	for _, t := range p.Set.Traces {
		b := t.Bench
		if b == nil {
			continue
		}
		looked = true
		name := filepath.Base(t.Path)
		evi := func(note string) []model.Evidence {
			return []model.Evidence{{Rank: -1, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Note: name + " " + note}}
		}
		failedRun := map[int]bool{}
		for _, f := range b.Failures {
			failedRun[f.Run] = true
		}
		warnEx := b.NCCL.Warnings
		if len(warnEx) > maxEx {
			warnEx = warnEx[:maxEx]
		}
		for i := range b.Runs {
			r := &b.Runs[i]
			where := fmt.Sprintf("run %d (%s, line %d)", i+1, orUnknown(r.Collective), r.Line)
			wrongData(p, r, name, where, evi(where))
			if r.AvgFailed {
				p.Report(model.Finding{
					Severity:       model.SevWarning,
					Title:          "nccl-tests average bus bandwidth below the required minimum",
					Message:        fmt.Sprintf("%s %s: \"Avg bus bandwidth : %.6g FAILED\": below 0.9 x NCCL_TESTS_MIN_BW.", name, where, r.ReportedAvgBusBW),
					Recommendation: "See nccl-bandwidth for where the bandwidth is lost; the average is dominated by small sizes, compare the plateau instead.",
					Metrics:        []model.Metric{{Name: "avg_busbw", Value: r.ReportedAvgBusBW, Unit: "GB/s"}},
					Evidence:       evi(where),
				})
			}
			switch {
			case !r.Truncated || failedRun[i]:
			case len(b.Failures) == 0 && len(r.Rows) > 0:
				// Rows but no footer, and no failure, abort or timeout line
				// anywhere: an excerpt cut out of a longer log (issue
				// threads), not a failed run.
				incomplete(p, r, name, where, evi(where))
			case len(b.Failures) == 0:
				// No table at all and no failure line: initialisation hung
				// or the log was cut; without a failure line it is not an error.
				truncated(p, r, b, name, where, model.SevWarning, evi(where))
			default:
				truncated(p, r, b, name, where, model.SevError, evi(where))
			}
		}
		failures(p, b, name, warnEx, evi)
		if len(b.NCCL.Warnings) > 0 && len(b.Failures) == 0 {
			p.Report(model.Finding{
				Severity: model.SevWarning,
				Title:    "NCCL printed warnings",
				Message: fmt.Sprintf("%s: %d NCCL WARN lines (%d distinct), e.g. %s.", name, b.NCCL.WarnLines, len(b.NCCL.Warnings),
					quoteAll(warnEx)),
				Recommendation: "Read the WARN lines with NCCL_DEBUG=INFO context; \"Failed to open libibverbs\" means no RDMA (TCP sockets between nodes).",
				Metrics:        []model.Metric{{Name: "warn_lines", Value: float64(b.NCCL.WarnLines), Unit: "count"}, {Name: "distinct", Value: float64(len(b.NCCL.Warnings)), Unit: "count"}},
				Evidence:       evi("NCCL WARN"),
			})
		}
		duplicated(p, b, name, evi)
	}
	if !looked {
		p.NotMeasurable("no nccl-tests / rccl-tests input")
	}
	return nil
}

func wrongData(p *detectors.Pass, r *model.BenchRun, name, where string, ev []model.Evidence) {
	rows := 0
	var total int64
	first := int64(-1)
	firstPlace := ""
	for _, row := range r.Rows {
		bad := false
		for place, h := range map[string]model.BenchResult{"out-of-place": row.OutOfPlace, "in-place": row.InPlace} {
			if h.Present && h.Wrong > 0 {
				bad = true
				total += h.Wrong
				if first < 0 || row.SizeBytes < first || (row.SizeBytes == first && place < firstPlace) {
					first, firstPlace = row.SizeBytes, place
				}
			}
		}
		if bad {
			rows++
		}
	}
	if rows == 0 && !r.OOBFailed {
		return
	}
	msg := fmt.Sprintf("%s %s: ", name, where)
	if rows > 0 {
		msg += fmt.Sprintf("%d of %d rows report wrong elements (#wrong total %d, first at %d bytes %s)", rows, len(r.Rows), total, first, firstPlace)
	}
	if r.OOBFailed {
		if rows > 0 {
			msg += "; "
		}
		msg += fmt.Sprintf("\"Out of bounds values : %d FAILED\"", r.OOBValues)
	}
	p.Report(model.Finding{
		Severity:       model.SevError,
		Title:          "nccl-tests found wrong results",
		Message:        msg + ".",
		Recommendation: "Treat as data corruption: bisect the path with NCCL_P2P_DISABLE=1 / NCCL_SHM_DISABLE=1 / NCCL_NET_GDR_LEVEL=LOC, check ECC errors and NIC/switch firmware.",
		Metrics: []model.Metric{{Name: "wrong_rows", Value: float64(rows), Unit: "count"}, {Name: "wrong_elements", Value: float64(total), Unit: "count"},
			{Name: "oob_values", Value: float64(maxI64(r.OOBValues, 0)), Unit: "count"}},
		Evidence: ev,
	})
}

// incomplete notes a run whose table stops without its footer in a log with
// no failure line: the log is an excerpt (or was cut), which says nothing
// about the run itself.
func incomplete(p *detectors.Pass, r *model.BenchRun, name, where string, ev []model.Evidence) {
	// Only called for runs with rows (the caller sends the rest to truncated).
	what := fmt.Sprintf("ends after %d table rows (last size %d bytes) without the footer", len(r.Rows), lastSize(r))
	p.Report(model.Finding{
		Severity:       model.SevInfo,
		Confidence:     model.Inferred,
		Title:          "nccl-tests log is incomplete (an excerpt), not a failed run",
		Message:        fmt.Sprintf("%s %s: the log %s and holds no failure, abort or timeout line, so it reads as an excerpt cut out of a longer log; the rows it has are analysed as they are.", name, where, what),
		Recommendation: "Attach the whole log to judge whether the run finished; a real hang shows a timeout (nccl-tests -T) or a launcher abort.",
		Metrics:        []model.Metric{{Name: "rows", Value: float64(len(r.Rows)), Unit: "count"}, {Name: "last_size", Value: float64(lastSize(r)), Unit: "bytes"}},
		Evidence:       ev,
	})
}

func truncated(p *detectors.Pass, r *model.BenchRun, b *model.Bench, name, where string, sev model.Severity, ev []model.Evidence) {
	var msg string
	switch {
	case len(r.Rows) > 0:
		last := r.Rows[len(r.Rows)-1].SizeBytes
		msg = fmt.Sprintf("%s %s: the table stops after %d rows at %d bytes without its footer", name, where, len(r.Rows), last)
		if r.Params.MaxBytes > last {
			msg += fmt.Sprintf(" (maxBytes %d not reached)", r.Params.MaxBytes)
		}
		msg += ": the run hung, crashed or the log was cut."
	case r.TableHeader:
		msg = fmt.Sprintf("%s %s: the table header was printed but no row followed: the first collective hung or the log was cut.", name, where)
	default:
		msg = fmt.Sprintf("%s %s: the run printed its header and %d rank lines but never its table: initialisation hung or the job died.", name, where, len(r.Devices))
		if b.NCCL.InitRanks > 0 {
			msg += fmt.Sprintf(" NCCL logged %d \"Init COMPLETE\" lines for %d ranks.", b.NCCL.InitComplete, b.NCCL.InitRanks)
		}
	}
	p.Report(model.Finding{
		Severity:       sev,
		Title:          "nccl-tests run did not finish",
		Message:        msg,
		Recommendation: "Re-run with NCCL_DEBUG=INFO and nccl-tests -T <seconds> to turn a hang into a reported timeout; check the last INFO phase (Init COMPLETE, Connected all rings).",
		Metrics: []model.Metric{{Name: "rows", Value: float64(len(r.Rows)), Unit: "count"},
			{Name: "last_size", Value: float64(lastSize(r)), Unit: "bytes"}, {Name: "max_bytes", Value: float64(r.Params.MaxBytes), Unit: "bytes"}},
		Evidence: ev,
	})
}

type failGroup struct {
	kind, msg string
	hosts     []string
	n         int
	line, run int
	src       string
}

func failures(p *detectors.Pass, b *model.Bench, name string, warnEx []string, evi func(string) []model.Evidence) {
	groups := map[string]*failGroup{}
	var order []string
	backtraces := 0
	for _, f := range b.Failures {
		if f.Kind == "test" {
			backtraces++
			continue
		}
		key := f.Kind + "\x00" + f.Message
		g := groups[key]
		if g == nil {
			g = &failGroup{kind: f.Kind, msg: f.Message, line: f.Line, run: f.Run, src: f.Source}
			groups[key] = g
			order = append(order, key)
		}
		g.n++
		if f.Host != "" && !contains(g.hosts, f.Host) {
			g.hosts = append(g.hosts, f.Host)
		}
	}
	if len(order) == 0 && backtraces > 0 {
		// Only a back-trace: the failure line itself was cut off.
		groups["test"] = &failGroup{kind: "test", msg: "Test failure (back-trace only)", n: backtraces, line: firstLine(b, "test"), run: -1}
		order = append(order, "test")
	}
	for _, key := range order {
		g := groups[key]
		sort.Strings(g.hosts)
		what := map[string]string{"nccl": "NCCL call failed", "cuda": "CUDA call failed", "timeout": "test timed out",
			"launcher": "the launcher aborted the job", "test": "test failed", "other": "failure"}[g.kind]
		msg := fmt.Sprintf("%s line %d: %s %d time(s)", name, g.line, what, g.n)
		if g.src != "" {
			msg += " at " + g.src
		}
		msg += fmt.Sprintf(": %q", strings.TrimSpace(g.msg))
		if len(g.hosts) > 0 {
			msg += fmt.Sprintf(" on %d host(s) (%s)", len(g.hosts), strings.Join(clip(g.hosts, 4), ", "))
		}
		if g.run >= 0 && g.run < len(b.Runs) {
			r := &b.Runs[g.run]
			msg += fmt.Sprintf(", during run %d (%s) after %d rows", g.run+1, orUnknown(r.Collective), len(r.Rows))
		}
		if len(warnEx) > 0 {
			msg += "; NCCL warned: " + quoteAll(warnEx)
		}
		p.Report(model.Finding{
			Severity:       model.SevError,
			Title:          "nccl-tests failed",
			Message:        msg + ".",
			Recommendation: recommendFor(g.msg, warnEx),
			Metrics: []model.Metric{{Name: "failures", Value: float64(g.n), Unit: "count"}, {Name: "hosts", Value: float64(len(g.hosts)), Unit: "count"},
				{Name: "backtrace_lines", Value: float64(backtraces), Unit: "count"}},
			Evidence: evi(fmt.Sprintf("line %d", g.line)),
		})
	}
}

func recommendFor(msg string, warns []string) string {
	all := strings.ToLower(msg + " " + strings.Join(warns, " "))
	switch {
	case strings.Contains(all, "shm") || strings.Contains(all, "/dev/shm") || strings.Contains(all, "shared memory"):
		return "Shared memory is too small: run containers with --ipc=host or --shm-size=1g or more."
	case strings.Contains(all, "out of memory"):
		return "GPU memory is exhausted: lower -e (maxBytes) or free the GPUs of other processes."
	case strings.Contains(all, "ibv_modify_qp") || strings.Contains(all, "gid"):
		return "RDMA connection setup failed: set NCCL_IB_GID_INDEX (RoCE), check NCCL_CROSS_NIC and that the rails are reachable."
	case strings.Contains(all, "connect") || strings.Contains(all, "socket") || strings.Contains(all, "remote process"):
		return "A peer could not be reached or died: check NCCL_SOCKET_IFNAME, firewalls and the first rank that failed."
	case strings.Contains(all, "cxi") || strings.Contains(all, "pmi") || strings.Contains(all, "start failed") || strings.Contains(all, "mpirun"):
		return "The launcher failed before or while starting nccl-tests: check the allocation, PMI and fabric resources (e.g. CXI service limits)."
	case strings.Contains(all, "internal error") || strings.Contains(all, "version"):
		return "Check that nccl-tests runs against the NCCL (or RCCL) it was built with and that CUDA/ROCm and the driver match."
	}
	return "Re-run with NCCL_DEBUG=INFO and read the WARN lines just before the failure."
}

// duplicated flags independent processes that each ran a one-rank test.
func duplicated(p *detectors.Pass, b *model.Bench, name string, evi func(string) []model.Evidence) {
	for i := range b.Runs {
		r := &b.Runs[i]
		seen := map[int]int{}
		dups := 0
		for _, d := range r.Devices {
			seen[d.Rank]++
			if seen[d.Rank] == 2 {
				dups++
			}
		}
		if r.Processes > 1 || dups > 0 {
			where := fmt.Sprintf("run %d (%s, line %d)", i+1, orUnknown(r.Collective), r.Line)
			p.Report(model.Finding{
				Severity: model.SevWarning,
				Title:    "nccl-tests processes ran separately instead of as one job",
				Message: fmt.Sprintf("%s %s: %d copies of the header, rank numbers repeated %d time(s) (%d rank lines for %d distinct ranks on %d host(s)), %d \"Avg bus bandwidth\" lines: each process ran its own test.",
					name, where, r.Processes, dups, len(r.Devices), r.Ranks, len(r.Hosts), r.AvgLines),
				Recommendation: "Rebuild nccl-tests with MPI=1 (MPI_HOME=...) and launch with mpirun/srun so that the processes form one communicator.",
				Metrics:        []model.Metric{{Name: "processes", Value: float64(r.Processes), Unit: "count"}, {Name: "repeated_ranks", Value: float64(dups), Unit: "count"}},
				Evidence:       evi(where),
			})
		}
	}
	// Sequences of identical one-rank runs on different hosts.
	for i := 0; i < len(b.Runs); {
		j := i + 1
		hosts := map[string]bool{}
		for _, h := range b.Runs[i].Hosts {
			hosts[h] = true
		}
		for j < len(b.Runs) && sameOneRank(&b.Runs[i], &b.Runs[j]) {
			for _, h := range b.Runs[j].Hosts {
				hosts[h] = true
			}
			j++
		}
		if j-i >= 2 && b.Runs[i].Ranks == 1 && len(hosts) >= 2 {
			r := &b.Runs[i]
			where := fmt.Sprintf("runs %d-%d (%s, from line %d)", i+1, j, orUnknown(r.Collective), r.Line)
			p.Report(model.Finding{
				Severity:       model.SevWarning,
				Title:          "nccl-tests processes ran separately instead of as one job",
				Message:        fmt.Sprintf("%s %s: %d identical one-rank runs on %d different hosts: the processes did not join one communicator.", name, where, j-i, len(hosts)),
				Recommendation: "Rebuild nccl-tests with MPI=1 (MPI_HOME=...) and launch with mpirun/srun so that the processes form one communicator.",
				Metrics:        []model.Metric{{Name: "runs", Value: float64(j - i), Unit: "count"}, {Name: "hosts", Value: float64(len(hosts)), Unit: "count"}},
				Evidence:       evi(where),
			})
		}
		i = j
	}
}

func sameOneRank(a, b *model.BenchRun) bool {
	return a.Ranks == 1 && b.Ranks == 1 && a.Collective == b.Collective && a.Params == b.Params &&
		(len(a.Hosts) == 0 || len(b.Hosts) == 0 || a.Hosts[0] != b.Hosts[0] || devPID(a) != devPID(b))
}

func devPID(r *model.BenchRun) int64 {
	if len(r.Devices) == 0 {
		return -1
	}
	return r.Devices[0].PID
}

func lastSize(r *model.BenchRun) int64 {
	if len(r.Rows) == 0 {
		return 0
	}
	return r.Rows[len(r.Rows)-1].SizeBytes
}

func firstLine(b *model.Bench, kind string) int {
	for _, f := range b.Failures {
		if f.Kind == kind {
			return f.Line
		}
	}
	return 0
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func clip(ss []string, n int) []string {
	if len(ss) <= n {
		return ss
	}
	return append(append([]string(nil), ss[:n]...), fmt.Sprintf("%d more", len(ss)-n))
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func maxI64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown collective"
	}
	return s
}
