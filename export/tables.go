package export

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// cell is one table cell; name cells hold kernel, range, op or API names
// (code spans in Markdown, escaped in text).
type cell struct {
	s    string
	name bool
}

// sumTable is one summary table, built once from the report and written by
// the text, Markdown and HTML renderers.
type sumTable struct {
	id    string // stable id (HTML anchors, tests)
	title string
	note  string
	head  []string
	rows  [][]cell
	more  int // rows left out by the limit
}

func plain(format string, args ...any) cell { return cell{s: fmt.Sprintf(format, args...)} }
func nameCell(s string) cell                { return cell{s: s, name: true} }

// fdur formats a float ns value as a Duration ("-" when unknown).
func fdur(f float64) cell {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return cell{s: "-"}
	}
	return cell{s: model.Duration(math.Round(f)).String()}
}

func dur(d model.Duration) cell { return cell{s: d.String()} }

// optDur formats a duration that may be unknown (negative: "-").
func optDur(d model.Duration) cell {
	if d < 0 {
		return cell{s: "-"}
	}
	return dur(d)
}

// bytesCell formats a byte count with a binary unit, without exponents.
func bytesCell(b int64) cell {
	if b < 0 {
		return cell{s: "-"}
	}
	return cell{s: humanBytes(b)}
}

func humanBytes(b int64) string {
	const k = 1024
	switch {
	case b < k:
		return fmt.Sprintf("%d B", b)
	case b < k*k:
		return fmt.Sprintf("%.1f KiB", float64(b)/k)
	case b < k*k*k:
		return fmt.Sprintf("%.1f MiB", float64(b)/(k*k))
	default:
		return fmt.Sprintf("%.2f GiB", float64(b)/(k*k*k))
	}
}

// summaryTables builds the summary tables; limit bounds each table's rows
// (0 = no limit).
func summaryTables(r *model.Report, limit int) []sumTable {
	var out []sumTable
	take := func(n int) (int, int) {
		if limit > 0 && n > limit {
			return limit, n - limit
		}
		return n, 0
	}
	if len(r.Kernels) > 0 {
		var total model.Duration
		for _, k := range r.Kernels {
			total += k.Total
		}
		n, more := take(len(r.Kernels))
		t := sumTable{id: "kernels", title: "Kernels", note: fmt.Sprintf("%d distinct kernels, %s of kernel time in total. Median and p90 interpolate linearly (DuckDB quantile_cont); stddev is the sample standard deviation.", len(r.Kernels), total),
			head: []string{"total", "share", "count", "avg", "median", "p90", "min", "max", "stddev", "class", "device", "kernel"}, more: more}
		for _, k := range r.Kernels[:n] {
			med, p90, sd, class, dev := cell{s: "-"}, cell{s: "-"}, cell{s: "-"}, cell{s: "-"}, cell{s: "-"}
			if k.HasStats {
				med, p90, sd = fdur(k.Median), fdur(k.P90), fdur(k.Stddev)
				if k.Class != "" {
					class = plain("%s", k.Class)
				}
				if k.Device != model.NoDevice {
					dev = plain("%d", k.Device)
				}
			}
			t.rows = append(t.rows, []cell{dur(k.Total), plain("%.1f%%", pct(k.Total, total)), plain("%d", k.Count), fdur(k.Avg()),
				med, p90, dur(k.Min), dur(k.Max), sd, class, dev, nameCell(k.Name)})
		}
		out = append(out, t)
	}
	s := &r.Summary
	if len(s.Ops) > 0 {
		n, more := take(len(s.Ops))
		t := sumTable{id: "ops", title: "CPU operators by GPU time", note: "GPU time of the kernels each operator launched (innermost operator, by Kineto External id).",
			head: []string{"GPU time", "kernels", "top kernel", "op"}, more: more}
		for _, o := range s.Ops[:n] {
			top := cell{s: "-"}
			if len(o.Kernels) > 0 {
				top = nameCell(o.Kernels[0].Name)
			}
			t.rows = append(t.rows, []cell{dur(o.GPU), plain("%d", o.Launches), top, nameCell(o.Name)})
		}
		out = append(out, t)
	}
	if len(s.Ranges) > 0 {
		n, more := take(len(s.Ranges))
		t := sumTable{id: "ranges", title: "Annotated ranges (NVTX, user annotations, steps)", note: "GPU time: kernels and copies launched from inside the range on its thread (- when the capture cannot tell).",
			head: []string{"total", "count", "avg", "median", "min", "max", "GPU time", "kind", "domain", "range"}, more: more}
		for _, g := range s.Ranges[:n] {
			dom := cell{s: "-"}
			if g.Domain != "" {
				dom = nameCell(g.Domain)
			}
			t.rows = append(t.rows, []cell{dur(g.Stats.Total), plain("%d", g.Stats.Count), fdur(g.Stats.Avg), fdur(g.Stats.Median),
				dur(g.Stats.Min), dur(g.Stats.Max), optDur(g.GPU), plain("%s", g.Kind), dom, nameCell(g.Name)})
		}
		out = append(out, t)
	}
	if len(s.API) > 0 {
		n, more := take(len(s.API))
		t := sumTable{id: "api", title: "CUDA API calls", head: []string{"total", "count", "avg", "median", "max", "source", "call"}, more: more}
		for _, a := range s.API[:n] {
			t.rows = append(t.rows, []cell{dur(a.Stats.Total), plain("%d", a.Stats.Count), fdur(a.Stats.Avg), fdur(a.Stats.Median),
				dur(a.Stats.Max), plain("%s", a.Source), nameCell(a.Name)})
		}
		out = append(out, t)
	}
	if len(s.Copies) > 0 {
		head := []string{"kind", "count", "bytes", "time", "GB/s"}
		head = append(head, model.SizeBucketLabels...)
		t := sumTable{id: "copies", title: "Copies and sets by kind", note: "GB/s = bytes / time of the operations with a known size.", head: head}
		for _, c := range s.Copies {
			bw := cell{s: "-"}
			if !math.IsNaN(c.GBps) {
				bw = plain("%.2f", c.GBps)
			}
			row := []cell{plain("%s", c.Kind), plain("%d", c.Count), bytesCell(c.Bytes), dur(c.Total), bw}
			for _, n := range c.Sizes {
				row = append(row, plain("%d", n))
			}
			t.rows = append(t.rows, row)
		}
		out = append(out, t)
	}
	if len(s.Memory) > 0 {
		t := sumTable{id: "memory", title: "Device memory (allocator)", head: []string{"rank", "device", "peak allocated", "peak reserved", "events"}}
		for _, m := range s.Memory {
			t.rows = append(t.rows, []cell{plain("%s", rankLabel(m.Rank)), plain("%d", m.Device), bytesCell(m.PeakAllocated), bytesCell(m.PeakReserved), plain("%d", m.Events)})
		}
		out = append(out, t)
	}
	out = append(out, stepTables(r, limit)...)
	return append(out, servingTables(r)...)
}

// writeTableText writes t as aligned columns; the name column (the last)
// is cut to nameWidth.
func writeTableText(p func(string, ...any), nm names, t sumTable, nameWidth int) {
	p("\n%s\n", t.title)
	widths := make([]int, len(t.head))
	text := make([][]string, len(t.rows))
	for i, h := range t.head {
		widths[i] = len([]rune(h))
	}
	for r, row := range t.rows {
		text[r] = make([]string, len(row))
		for i, c := range row {
			s := nm.text(c.s)
			if c.name {
				s = truncate(s, nameWidth)
			}
			text[r][i] = s
			widths[i] = max(widths[i], len([]rune(s)))
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString(" ")
		for i, s := range cells {
			pad := widths[i] - len([]rune(s))
			if i == len(cells)-1 {
				b.WriteString(" " + s)
				continue
			}
			if t.head[i] == "" || isLeft(t, i) {
				b.WriteString(" " + s + strings.Repeat(" ", pad))
			} else {
				b.WriteString(" " + strings.Repeat(" ", pad) + s)
			}
		}
		p("%s\n", strings.TrimRight(b.String(), " "))
	}
	line(t.head)
	for _, row := range text {
		line(row)
	}
	if t.more > 0 {
		p("  … %d more (--detail full or --format json for all)\n", t.more)
	}
}

// isLeft says whether column i holds text (left-aligned) rather than numbers.
func isLeft(t sumTable, i int) bool {
	if len(t.rows) == 0 {
		return false
	}
	c := t.rows[0][i]
	if c.name {
		return true
	}
	switch t.head[i] {
	case "class", "kind", "source", "domain", "rank":
		return true
	}
	return false
}

// writeTableMD writes t as a GFM table.
func writeTableMD(p func(string, ...any), nm names, t sumTable, level string) {
	p("%s %s\n\n", level, nm.md(t.title))
	if t.note != "" {
		p("%s\n\n", nm.md(t.note))
	}
	p("|")
	for _, h := range t.head {
		p(" %s |", nm.md(h))
	}
	p("\n|")
	for i := range t.head {
		if isLeft(t, i) {
			p("---|")
		} else {
			p("--:|")
		}
	}
	p("\n")
	for _, row := range t.rows {
		p("|")
		for _, c := range row {
			if c.name {
				p(" %s |", nm.code(c.s))
			} else {
				p(" %s |", nm.md(c.s))
			}
		}
		p("\n")
	}
	if t.more > 0 {
		p("\n%d more rows (`--detail full` or the JSON report for all).\n", t.more)
	}
	p("\n")
}

// Cell is one cell of a summary table; Name cells hold kernel, range, op or
// API names.
type Cell struct {
	Text string
	Name bool
}

// Table is one summary table as the text and Markdown reports show it.
type Table struct {
	ID, Title, Note string
	Head            []string
	Rows            [][]Cell
	// More counts the rows left out by the limit.
	More int
}

// SummaryTables returns the summary tables of r, at most limit rows each
// (0 = all), for other renderers (HTML).
func SummaryTables(r *model.Report, limit int) []Table {
	var out []Table
	for _, t := range summaryTables(r, limit) {
		o := Table{ID: t.id, Title: t.title, Note: t.note, Head: t.head, More: t.more}
		for _, row := range t.rows {
			cells := make([]Cell, len(row))
			for i, c := range row {
				cells[i] = Cell{Text: c.s, Name: c.name}
			}
			o.Rows = append(o.Rows, cells)
		}
		out = append(out, o)
	}
	return out
}

// Shorten applies the default name cap (DefaultMaxNameBytes) to a name.
func Shorten(s string) string { return names(DefaultMaxNameBytes).short(s) }

// EvidenceWhere describes where an evidence window is, with its offset from
// its rank's first GPU activity.
func EvidenceWhere(r *model.Report, ev model.Evidence) string { return evidenceWhere(ev, origins(r)) }

// FormatMetric formats a finding metric for people (no exponents).
func FormatMetric(m model.Metric) string { return formatMetric(m) }

// TextSafe applies the default name cap and escapes control characters
// (see names.text).
func TextSafe(s string) string { return names(DefaultMaxNameBytes).text(s) }
