package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// maxTextKernels and maxTextWarnings bound the terminal summary.
const (
	maxTextKernels  = 10
	maxTextWarnings = 10
	maxTextEvidence = 5
)

// Text writes the terminal summary.
func Text(w io.Writer, r *model.Report) error { return textOpts(w, r, Options{}) }

func textOpts(w io.Writer, r *model.Report, o Options) error {
	nm := o.names()
	limit := maxTextKernels
	if o.Full {
		limit = 0
	}
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	e, wn, in := severityCounts(r)
	p("%s %s — %d input(s), %d finding(s): %d error, %d warning, %d info\n", r.ToolName, r.ToolVersion, len(r.Inputs), len(r.Findings), e, wn, in)
	writeJobText(p, r)
	for i, input := range r.Inputs {
		p("  %s  [%s, rank %s]", nm.text(input.Path), input.Format, rankLabel(input.Rank))
		if input.Producer != "" {
			p("  %s", nm.text(input.Producer))
		}
		p("\n")
		if i < len(r.Health) {
			h := r.Health[i]
			p("    holds: %s\n", orNone(strings.Join(h.Capabilities, ", ")))
			for _, n := range h.Notes {
				p("    note: %s\n", nm.text(n))
			}
			if h.Warnings > 0 {
				p("    %d import warning(s)\n", h.Warnings)
			}
		}
	}
	if len(r.Devices) > 0 {
		p("\nGPU time (window: %s)\n", r.Window)
		p("  %-4s %-4s %-24s %12s %12s %7s %8s %8s %8s\n", "rank", "dev", "name", "span", "busy", "idle%", "compute%", "comm%", "memory%")
		for _, d := range r.Devices {
			p("  %-4s %-4d %-24s %12s %12s %6.1f%% %7.1f%% %7.1f%% %7.1f%%\n", rankLabel(d.Rank), d.Device, truncate(nm.text(d.Name), 24), d.Span, d.Busy,
				pct(d.Idle, d.Span), pct(d.Compute, d.Span), pct(d.Communication, d.Span), pct(d.Memory, d.Span))
		}
	}
	for _, t := range summaryTables(r, limit) {
		writeTableText(p, nm, t, 90)
	}
	if len(r.Bench) > 0 {
		writeBenchText(p, nm, r)
	}
	orig := origins(r)
	if len(r.Findings) > 0 {
		p("\nFindings\n")
		for _, f := range r.Findings {
			p("  [%s] %s: %s\n", strings.ToUpper(f.Severity.String()), f.Rule, nm.text(f.Title))
			p("      %s\n", nm.text(f.Message))
			writeRankTableText(p, &f, "      ")
			for i, ev := range f.Evidence {
				if i == maxTextEvidence && !o.Full {
					p("      … %d more evidence windows\n", len(f.Evidence)-maxTextEvidence)
					break
				}
				p("      at %s: %s\n", evidenceWhere(ev, orig), nm.text(ev.Note))
			}
			if f.Recommendation != "" {
				p("      fix: %s\n", nm.text(f.Recommendation))
			}
		}
	} else {
		p("\nNo findings.\n")
	}
	if len(r.NotMeasurable) > 0 {
		p("\nNot measurable\n")
		for _, n := range r.NotMeasurable {
			p("  %s: %s\n", n.Rule, nm.text(n.Reason))
		}
	}
	if len(r.Warnings) > 0 {
		p("\nWarnings (%d)\n", len(r.Warnings))
		for i, w := range r.Warnings {
			if i == maxTextWarnings && !o.Full {
				p("  … %d more (use --format json for all)\n", len(r.Warnings)-maxTextWarnings)
				break
			}
			p("  %s: %s: %s\n", nm.text(baseName(w.File)), nm.text(w.Position), nm.text(w.Message))
		}
	}
	return bw.Flush()
}

func writeBenchText(p func(string, ...any), nm names, r *model.Report) {
	for _, ib := range r.Bench {
		b := ib.Bench
		p("\nBenchmarks in %s\n", nm.text(baseName(ib.Path)))
		if b.NCCL.Version != "" || b.NCCL.Network != "" {
			p("  NCCL %s, network %s, transports %s\n", nm.text(orNone(b.NCCL.Version)), nm.text(orNone(b.NCCL.Network)), nm.text(orNone(strings.Join(b.NCCL.Transports, ", "))))
		}
		for _, run := range b.Runs {
			p("  %-16s %s ranks %s nodes %-20s %3d sizes, peak busbw %s", nm.text(run.Collective), benchRanks(run), countOrUnknown(run.Nodes), truncate(nm.text(run.GPU), 20), len(run.Rows), peakBusBW(run))
			if run.ReportedAvgBusBW >= 0 {
				p(", avg %.3f GB/s", run.ReportedAvgBusBW)
			}
			p("\n")
		}
	}
}

func evidenceWhere(ev model.Evidence, orig map[int]model.Time) string {
	var parts []string
	if ev.Rank != model.NoRank {
		parts = append(parts, fmt.Sprintf("rank %d", ev.Rank))
	}
	if ev.Device != model.NoDevice {
		parts = append(parts, fmt.Sprintf("device %d", ev.Device))
	}
	if ev.Stream != model.NoStream {
		parts = append(parts, fmt.Sprintf("stream %d", ev.Stream))
	}
	if ev.Thread >= 0 {
		parts = append(parts, fmt.Sprintf("thread %d", ev.Thread))
	}
	if ev.End > ev.Start || ev.Start != 0 {
		parts = append(parts, fmt.Sprintf("%s (%s, [%d, %d] ns)", offset(orig, ev.Rank, ev.Start), model.Duration(ev.End-ev.Start), ev.Start, ev.End))
	}
	if len(parts) == 0 {
		return "input"
	}
	return strings.Join(parts, " ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// peakBusBW formats a run's peak bus bandwidth; a single-rank run moves no
// data between GPUs, so its busbw means nothing.
func peakBusBW(run model.BenchRun) string {
	if run.Ranks == 1 {
		return "n/a (1 rank)"
	}
	peak := 0.0
	for _, row := range run.Rows {
		peak = max(peak, row.OutOfPlace.BusBWGBps, row.InPlace.BusBWGBps)
	}
	return fmt.Sprintf("%.2f GB/s", peak)
}

// benchRanks writes a run's rank count: "?" when the log does not say,
// "8 (inferred)" when derived from busbw/algbw or NCCL's init lines.
func benchRanks(run model.BenchRun) string {
	if run.RanksInferred && run.Ranks > 0 {
		return fmt.Sprintf("%d (inferred)", run.Ranks)
	}
	return countOrUnknown(run.Ranks)
}

func countOrUnknown(n int) string {
	if n <= 0 {
		return "?"
	}
	return fmt.Sprint(n)
}
