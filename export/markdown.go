package export

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// MaxMarkdownBytes is the size the ticket-sized Markdown report stays under
// (a GitHub comment holds 65,536 characters); --detail full lifts it.
const MaxMarkdownBytes = 60000

// mdBudget is one level of detail of the Markdown report.
type mdBudget struct {
	rows      int // rows per summary table (0 = all)
	evidence  int // evidence windows per finding (-1 = all)
	perRank   int // per-rank lines per rule (0 = all)
	warnings  int // import warnings (0 = all)
	inputs    int // rows of the inputs table before the rest go into <details> (0 = all)
	metrics   bool
	devices   int // rows of the GPU time table (0 = all)
	benchRows int // benchmark runs per input (0 = all)
}

// mdLevels are tried in order until the report fits MaxMarkdownBytes.
var mdLevels = []mdBudget{
	{rows: 15, evidence: 3, perRank: 0, warnings: 20, inputs: 16, metrics: true, devices: 0, benchRows: 0},
	{rows: 10, evidence: 2, perRank: 32, warnings: 10, inputs: 16, metrics: true, devices: 64, benchRows: 20},
	{rows: 8, evidence: 1, perRank: 16, warnings: 5, inputs: 8, metrics: false, devices: 32, benchRows: 10},
	{rows: 5, evidence: 1, perRank: 8, warnings: 3, inputs: 8, metrics: false, devices: 16, benchRows: 5},
	{rows: 3, evidence: 0, perRank: 4, warnings: 1, inputs: 4, metrics: false, devices: 8, benchRows: 3},
}

var mdFull = mdBudget{evidence: -1}

// Markdown writes the ticket-sized report with default options.
func Markdown(w io.Writer, r *model.Report) error { return markdownOpts(w, r, Options{}) }

// markdownOpts writes a ticket-ready report: the top problems first, then
// the findings grouped by rule (per-rank detail folded in <details>), GPU
// time, the summary tables, benchmarks and trace health. Names are code
// spans, other text is escaped. Unless o.Full, the level of detail drops
// until the report fits MaxMarkdownBytes. No "now" timestamps: same input,
// same bytes.
func markdownOpts(w io.Writer, r *model.Report, o Options) error {
	var buf bytes.Buffer
	if o.Full {
		writeMarkdown(&buf, r, mdFull, o.names())
		_, err := w.Write(buf.Bytes())
		return err
	}
	for i, b := range mdLevels {
		buf.Reset()
		writeMarkdown(&buf, r, b, o.names())
		if buf.Len() <= MaxMarkdownBytes {
			break
		}
		if i == len(mdLevels)-1 {
			cutMarkdown(&buf)
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// cutMarkdown cuts an over-long report at a line boundary, closing any open
// <details>, with a pointer to the full forms.
func cutMarkdown(buf *bytes.Buffer) {
	const tail = "\n\n*Report cut to fit a ticket: `--detail full` or `--format json` for everything.*\n"
	b := buf.Bytes()
	limit := MaxMarkdownBytes - len(tail) - 64
	cut := bytes.LastIndexByte(b[:limit], '\n')
	if cut < 0 {
		cut = limit
	}
	head := b[:cut]
	open := bytes.Count(head, []byte("<details>")) - bytes.Count(head, []byte("</details>"))
	out := append([]byte{}, head...)
	for ; open > 0; open-- {
		out = append(out, "\n\n</details>"...)
	}
	out = append(out, tail...)
	buf.Reset()
	buf.Write(out)
}

// RuleGroup is the findings of one rule across ranks and devices.
type RuleGroup struct {
	Rule     string
	Worst    *model.Finding
	Findings []*model.Finding
	Cost     model.Duration
}

// GroupFindings groups findings by rule, worst group first (severity, then
// cost). Findings already grouped across ranks (Ranks set) are grouped by
// kind (model.Finding.Kind), so a job-level finding such as the straggler is
// not folded under the same rule's per-rank finding.
func GroupFindings(r *model.Report) []*RuleGroup {
	by := map[string]*RuleGroup{}
	var out []*RuleGroup
	for i := range r.Findings {
		f := &r.Findings[i]
		key := f.Rule
		if len(f.Ranks) > 0 {
			key = f.Kind()
		}
		g := by[key]
		if g == nil {
			g = &RuleGroup{Rule: f.Rule, Worst: f}
			by[key] = g
			out = append(out, g)
		}
		g.Findings = append(g.Findings, f)
		c := f.Cost()
		g.Cost += c
		if f.Severity > g.Worst.Severity || (f.Severity == g.Worst.Severity && c > g.Worst.Cost()) {
			g.Worst = f
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Worst.Severity != out[j].Worst.Severity {
			return out[i].Worst.Severity > out[j].Worst.Severity
		}
		if out[i].Cost != out[j].Cost {
			return out[i].Cost > out[j].Cost
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// ScopeOf says where a group's findings are: "rank 0–7" or one evidence place.
func ScopeOf(g *RuleGroup) string {
	ranks := map[int]bool{}
	for _, f := range g.Findings {
		for _, e := range f.Evidence {
			if e.Rank != model.NoRank {
				ranks[e.Rank] = true
			}
		}
	}
	if len(ranks) <= 1 {
		return ""
	}
	return fmt.Sprintf(" on %d ranks", len(ranks))
}

func writeMarkdown(bw *bytes.Buffer, r *model.Report, b mdBudget, nm names) {
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	e, wn, in := severityCounts(r)
	title := "tracedx report"
	if jt := jobTitle(r); jt != "" {
		title += ": " + nm.md(jt)
	} else if len(r.Inputs) == 1 {
		title += ": " + nm.md(baseName(r.Inputs[0].Path))
	} else if len(r.Inputs) > 1 {
		title += fmt.Sprintf(": %d inputs", len(r.Inputs))
	}
	p("# %s\n\n", title)
	p("%d finding(s): **%d error**, **%d warning**, %d info. Generated by %s %s; breakdown window: `%s`.\n\n", len(r.Findings), e, wn, in,
		nm.md(r.ToolName), nm.md(r.ToolVersion), nm.md(r.Window))

	writeJobMD(p, nm, r)
	groups := GroupFindings(r)
	p("## Summary\n\n")
	writeSummaryMD(p, nm, groups)
	if len(r.Devices) > 0 {
		writeDevicesMD(p, nm, r, b.devices)
	}
	if len(groups) > 0 {
		p("## Findings\n\n")
		writeFindingsMD(p, nm, r, groups, b)
	}

	tables := summaryTables(r, b.rows)
	if len(tables) > 0 {
		p("## Summary tables\n\n")
		for _, t := range tables {
			writeTableMD(p, nm, t, "###")
		}
	}

	if len(r.Bench) > 0 {
		writeBenchMarkdown(p, nm, r, b.benchRows)
	}

	p("## Inputs and trace health\n\n")
	writeInputsMD(p, nm, r, b.inputs)
	writeProblemsMD(p, nm, r, b.warnings)
}

// writeSummaryMD lists the three worst rule groups.
func writeSummaryMD(p func(string, ...any), nm names, groups []*RuleGroup) {
	if len(groups) == 0 {
		p("No findings.\n\n")
	} else {
		for i, g := range groups {
			if i == 3 {
				break
			}
			n := ""
			if len(g.Findings) > 1 {
				n = fmt.Sprintf(" (%d findings%s)", len(g.Findings), ScopeOf(g))
			}
			cost := ""
			if g.Cost > 0 {
				cost = fmt.Sprintf(" Costs %s.", g.Cost)
			}
			p("%d. **%s** %s: %s%s.%s\n", i+1, g.Worst.Severity, nm.code(g.Rule), nm.md(g.Worst.Title), n, cost)
		}
		if len(groups) > 3 {
			p("\n%d more rule(s) below.\n", len(groups)-3)
		}
		p("\n")
	}
}

// writeDevicesMD writes the GPU time table, at most limit rows (0: all).
func writeDevicesMD(p func(string, ...any), nm names, r *model.Report, limit int) {
	p("## GPU time\n\n")
	rows := r.Devices
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	p("| rank | device | name | span | busy | idle | compute | communication | memory |\n|---|--:|---|--:|--:|--:|--:|--:|--:|\n")
	for _, d := range rows {
		p("| %s | %d | %s | %s | %s (%.1f%%) | %s (%.1f%%) | %s (%.1f%%) | %s (%.1f%%) | %s (%.1f%%) |\n", rankLabel(d.Rank), d.Device, nm.md(d.Name), d.Span,
			d.Busy, pct(d.Busy, d.Span), d.Idle, pct(d.Idle, d.Span), d.Compute, pct(d.Compute, d.Span),
			d.Communication, pct(d.Communication, d.Span), d.Memory, pct(d.Memory, d.Span))
	}
	if len(rows) < len(r.Devices) {
		p("\n%d more devices (`--detail full` or the JSON report).\n", len(r.Devices)-len(rows))
	}
	p("\n")
}

// writeFindingsMD writes each rule group: its worst finding in full, then
// the list of all its findings.
func writeFindingsMD(p func(string, ...any), nm names, r *model.Report, groups []*RuleGroup, b mdBudget) {
	orig := origins(r)
	for i, g := range groups {
		f := g.Worst
		p("### %d. [%s] %s\n\n", i+1, f.Severity, nm.md(f.Title))
		p("Rule %s (layer %s, confidence %s)", nm.code(g.Rule), nm.md(string(f.Layer)), nm.md(string(f.Confidence)))
		if len(g.Findings) > 1 {
			p("; %d findings%s, the worst shown", len(g.Findings), ScopeOf(g))
		}
		p(".\n\n%s\n\n", nm.md(f.Message))
		if b.metrics && len(f.Metrics) > 0 {
			p("| metric | value |\n|---|--:|\n")
			for _, m := range f.Metrics {
				if !isRankMetric(f, m.Name) {
					p("| %s | %s |\n", nm.code(m.Name), nm.md(formatMetric(m)))
				}
			}
			p("\n")
		}
		writeRankTableMD(p, nm, f)
		writeEvidenceMD(p, nm, f, orig, b.evidence)
		if f.Recommendation != "" {
			p("**How to fix:** %s\n\n", nm.md(f.Recommendation))
		}
		if len(g.Findings) > 1 {
			writeAllFindingsMD(p, nm, g, orig, b)
		}
	}
}

// writeAllFindingsMD lists every finding of a group of several with its
// first evidence (all with --detail full).
func writeAllFindingsMD(p func(string, ...any), nm names, g *RuleGroup, orig map[int]model.Time, b mdBudget) {
	p("<details><summary>All %d findings of %s</summary>\n\n", len(g.Findings), nm.md(g.Rule))
	for j, o := range g.Findings {
		if b.perRank > 0 && j == b.perRank {
			p("- … %d more (`--detail full`)\n", len(g.Findings)-j)
			break
		}
		p("- **%s** %s", o.Severity, nm.md(o.Title))
		if c := o.Cost(); c > 0 {
			p(" (%s)", c)
		}
		p("\n")
		ev := 1
		if b.evidence < 0 {
			ev = len(o.Evidence)
		} else if b.evidence == 0 {
			ev = 0
		}
		for k, e := range o.Evidence {
			if k == ev {
				break
			}
			p("  - %s: %s\n", nm.md(evidenceWhere(e, orig)), nm.md(e.Note))
		}
	}
	p("\n</details>\n\n")
}

// writeProblemsMD writes what was not measurable and the import warnings,
// at most limit of them (0: all).
func writeProblemsMD(p func(string, ...any), nm names, r *model.Report, limit int) {
	if len(r.NotMeasurable) > 0 {
		p("## Not measurable\n\n")
		for _, n := range r.NotMeasurable {
			p("- %s: %s\n", nm.code(n.Rule), nm.md(n.Reason))
		}
		p("\n")
	}
	if len(r.Warnings) > 0 {
		p("## Import warnings\n\n%d warning(s).\n\n", len(r.Warnings))
		for i, w := range r.Warnings {
			if limit > 0 && i == limit {
				p("- … %d more (see the JSON report)\n", len(r.Warnings)-limit)
				break
			}
			p("- %s %s: %s\n", nm.code(baseName(w.File)), nm.md(w.Position), nm.md(w.Message))
		}
		p("\n")
	}
}

func writeEvidenceMD(p func(string, ...any), nm names, f *model.Finding, orig map[int]model.Time, limit int) {
	if len(f.Evidence) == 0 || limit == 0 {
		return
	}
	p("Evidence:\n\n")
	for i, ev := range f.Evidence {
		if limit > 0 && i == limit {
			p("- … %d more windows (`--detail full`)\n", len(f.Evidence)-limit)
			break
		}
		p("- %s: %s\n", nm.md(evidenceWhere(ev, orig)), nm.md(ev.Note))
	}
	p("\n")
}

func writeInputsMD(p func(string, ...any), nm names, r *model.Report, limit int) {
	row := func(i int) {
		input := r.Inputs[i]
		holds, warns := "", 0
		if i < len(r.Health) {
			holds = strings.Join(r.Health[i].Capabilities, ", ")
			warns = r.Health[i].Warnings
		}
		p("| %s | %s | %s | %s | %s | %d |\n", nm.code(baseName(input.Path)), nm.md(string(input.Format)), rankLabel(input.Rank), nm.md(input.Producer), nm.md(orNone(holds)), warns)
	}
	head := "| input | format | rank | producer | holds | warnings |\n|---|---|--:|---|---|--:|\n"
	p("%s", head)
	n := len(r.Inputs)
	if limit > 0 && n > limit {
		n = limit
	}
	for i := 0; i < n; i++ {
		row(i)
	}
	if n < len(r.Inputs) {
		p("\n<details><summary>%d more inputs</summary>\n\n%s", len(r.Inputs)-n, head)
		for i := n; i < len(r.Inputs); i++ {
			row(i)
		}
		p("\n</details>\n")
	}
	notes := 0
	for _, h := range r.Health {
		for _, nt := range h.Notes {
			if limit > 0 && notes >= limit {
				break
			}
			notes++
			p("\n> **%s**: %s\n", nm.md(baseName(h.Path)), nm.md(nt))
		}
	}
	p("\n")
}

// formatMetric formats a finding metric for people: durations with a unit,
// percentages and counts fixed, other values in plain decimals (never an
// exponent).
func formatMetric(m model.Metric) string {
	if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
		return "-"
	}
	switch m.Unit {
	case "ns":
		return fmt.Sprintf("%s (%.0f ns)", model.Duration(m.Value), m.Value)
	case "%":
		return fmt.Sprintf("%.2f%%", m.Value)
	case "count":
		return fmt.Sprintf("%.0f", m.Value)
	}
	s := plainNumber(m.Value)
	if m.Unit != "" {
		s += " " + m.Unit
	}
	return s
}

// plainNumber formats f with four significant digits but never with an
// exponent: 12345678 → "12345678", 0.000123456 → "0.0001235".
func plainNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	a := math.Abs(f)
	dec := 3 - int(math.Floor(math.Log10(a)))
	dec = min(max(dec, 0), 12)
	s := strconv.FormatFloat(f, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func writeBenchMarkdown(p func(string, ...any), nm names, r *model.Report, limit int) {
	p("## Benchmarks\n\n")
	for _, ib := range r.Bench {
		b := ib.Bench
		p("%s", nm.code(baseName(ib.Path)))
		if b.NCCL.Version != "" || b.NCCL.Network != "" {
			p(": NCCL %s, network %s, transports %s", nm.md(orNone(b.NCCL.Version)), nm.md(orNone(b.NCCL.Network)), nm.md(orNone(strings.Join(b.NCCL.Transports, ", "))))
		}
		p("\n\n| collective | ranks | nodes | GPU | sizes | peak busbw | reported avg (GB/s) |\n|---|--:|--:|---|--:|--:|--:|\n")
		for i, run := range b.Runs {
			if limit > 0 && i == limit {
				p("\n%d more runs (`--detail full`).\n", len(b.Runs)-limit)
				break
			}
			avg := "-"
			if run.ReportedAvgBusBW >= 0 {
				avg = fmt.Sprintf("%.3f", run.ReportedAvgBusBW)
			}
			p("| %s | %s | %s | %s | %d | %s | %s |\n", nm.md(run.Collective), benchRanks(run), countOrUnknown(run.Nodes), nm.md(run.GPU), len(run.Rows), peakBusBW(run), avg)
		}
		p("\n")
	}
}
