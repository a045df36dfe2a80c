// Package diffreport renders a compare.Result — what `tracedx diff` found —
// as text, Markdown, JSON (schema tracedx.diff/v1) or JUnit XML. It formats;
// package compare computes.
package diffreport

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/export/junit"
	"github.com/tracedx/tracedx/model"
)

// Formats lists the output formats of Render.
var Formats = []string{"text", "md", "json", "junit"}

// TopKernels is how many kernel rows text and Markdown show (JSON has all).
const TopKernels = 20

// Render writes res in the given format.
func Render(w io.Writer, res *compare.Result, format string) error {
	switch format {
	case "text", "":
		return renderText(w, res, false)
	case "md", "markdown":
		return renderText(w, res, true)
	case "json":
		return renderJSON(w, res)
	case "junit":
		return renderJUnit(w, res)
	}
	return fmt.Errorf("unknown diff format %q (want %s)", format, strings.Join(Formats, ", "))
}

func fmtPct(p float64, ok bool) string {
	if !ok {
		return "—"
	}
	if math.Abs(p) < 0.05 {
		return "0.0%"
	}
	return fmt.Sprintf("%+.1f%%", p)
}

func fmtDelta(d model.Duration) string {
	if d > 0 {
		return "+" + d.String()
	}
	if d == 0 {
		return "0"
	}
	return d.String()
}

func inputsLine(in []model.Input) string {
	parts := make([]string, len(in))
	for i, x := range in {
		s := filepath.Base(x.Path) + " (" + string(x.Format)
		if x.Rank != model.NoRank {
			s += fmt.Sprintf(", rank %d", x.Rank)
		}
		parts[i] = s + ")"
	}
	return strings.Join(parts, ", ")
}

// table renders rows as aligned text columns or a Markdown table.
type table struct {
	md     bool
	header []string
	rows   [][]string
	// right marks right-aligned columns.
	right []bool
}

func (t *table) write(p func(string, ...any)) {
	if t.md {
		p("| %s |\n", strings.Join(t.header, " | "))
		seps := make([]string, len(t.header))
		for i := range seps {
			seps[i] = "---"
			if t.right[i] {
				seps[i] = "---:"
			}
		}
		p("|%s|\n", strings.Join(seps, "|"))
		for _, r := range t.rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = strings.ReplaceAll(c, "|", "\\|")
			}
			p("| %s |\n", strings.Join(cells, " | "))
		}
		return
	}
	width := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(r []string) {
		var sb strings.Builder
		sb.WriteString("  ")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i > 0 {
				sb.WriteString("  ")
			}
			if t.right[i] {
				sb.WriteString(pad + c)
			} else if i < len(r)-1 {
				sb.WriteString(c + pad)
			} else {
				sb.WriteString(c)
			}
		}
		p("%s\n", sb.String())
	}
	line(t.header)
	for _, r := range t.rows {
		line(r)
	}
}

// truncate shortens s to n runes keeping its head and tail, which tell
// templated kernel names apart better than the head alone.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := n / 3
	return string(r[:n-1-tail]) + "…" + string(r[len(r)-tail:])
}

func renderText(w io.Writer, res *compare.Result, md bool) error {
	bw := bufio.NewWriter(w)
	o := &textOut{md: md, bullet: "  "}
	o.p = func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	if md {
		o.bullet = "- "
	}
	o.header(res)
	o.h("Summary")
	o.summary(res)
	if len(res.Kernels) > 0 {
		o.kernels(res)
	}
	if len(res.Devices) > 0 {
		o.h("Devices")
		o.devices(res)
	}
	o.h("Findings")
	o.findings(res)
	if res.FailPct > 0 {
		o.h("Gate")
		o.gate(res)
	}
	return bw.Flush()
}

// textOut writes the text or Markdown (md) diff: p prints, bullet starts
// a top-level list line.
type textOut struct {
	p      func(string, ...any)
	md     bool
	bullet string
}

// h writes a section heading.
func (o *textOut) h(title string) {
	if o.md {
		o.p("\n## %s\n\n", title)
	} else {
		o.p("\n%s\n", title)
	}
}

// header names the two sides and says whether they are comparable.
func (o *textOut) header(res *compare.Result) {
	p, bullet := o.p, o.bullet
	if o.md {
		p("# tracedx diff\n\n- **base:** %s\n- **candidate:** %s\n", inputsLine(res.BaseInputs), inputsLine(res.CandInputs))
	} else {
		p("tracedx diff\n  base:       %s\n  candidate:  %s\n", inputsLine(res.BaseInputs), inputsLine(res.CandInputs))
	}
	if res.Comparable {
		p("%scomparable: yes (kernel-name overlap %.1f%%)\n", bullet, 100*res.Overlap)
	} else {
		p("%sWARNING not comparable: %s\n", bullet, strings.Join(res.Problems, "; "))
	}
}

// summary writes the table of headline quantities.
func (o *textOut) summary(res *compare.Result) {
	md, p := o.md, o.p
	st := &table{md: md, header: []string{"", "base", "candidate", "delta", "change", "measured as"}, right: []bool{false, true, true, true, true, false}}
	for _, q := range res.Quantities {
		if !q.Known {
			st.rows = append(st.rows, []string{q.Label, "—", "—", "—", "—", "not measurable: " + q.Why})
			continue
		}
		pc, ok := q.Pct()
		st.rows = append(st.rows, []string{q.Label, q.Base.String(), q.Cand.String(), fmtDelta(q.Delta()), fmtPct(pc, ok), q.Source})
	}
	st.write(p)
}

// kernels writes the TopKernels largest kernel changes, with a heading.
func (o *textOut) kernels(res *compare.Result) {
	md, p, h := o.md, o.p, o.h
	n := min(len(res.Kernels), TopKernels)
	h(fmt.Sprintf("Kernels (largest changes first, %d of %d)", n, len(res.Kernels)))
	kt := &table{md: md, header: []string{"kernel", "base n", "cand n", "base total", "cand total", "delta", "change"}, right: []bool{false, true, true, true, true, true, true}}
	for _, k := range res.Kernels[:n] {
		pc, ok := k.Pct()
		change := fmtPct(pc, ok)
		if s := k.Status(); s != "" {
			change = s
		}
		width := 72
		if md {
			width = 160
		}
		kt.rows = append(kt.rows, []string{truncate(k.Name, width), fmt.Sprint(k.BaseCount), fmt.Sprint(k.CandCount),
			k.BaseTotal.String(), k.CandTotal.String(), fmtDelta(k.Delta()), change})
	}
	kt.write(p)
}

// devices writes each device's time per class, or which side lacks it.
func (o *textOut) devices(res *compare.Result) {
	md, p := o.md, o.p
	dt := &table{md: md, header: []string{"device", "class", "base", "candidate", "delta", "change"}, right: []bool{false, false, true, true, true, true}}
	for i := range res.Devices {
		d := &res.Devices[i]
		label := fmt.Sprintf("GPU %d", d.Device)
		if d.Rank != model.NoRank {
			label = fmt.Sprintf("rank %d GPU %d", d.Rank, d.Device)
		}
		if d.Name != "" {
			label += " (" + d.Name + ")"
		}
		if d.Paired {
			label += fmt.Sprintf(" ↔ rank %d GPU %d", d.Cand.Rank, d.Cand.Device)
		}
		switch {
		case !d.InBase:
			dt.rows = append(dt.rows, []string{label, "—", "—", "—", "—", "only in candidate"})
			continue
		case !d.InCan:
			dt.rows = append(dt.rows, []string{label, "—", "—", "—", "—", "only in base"})
			continue
		}
		for j, c := range compare.Classes {
			b, cv := d.Class(c)
			pc, ok := compare.Pct(b, cv, true)
			l := label
			if j > 0 && !md {
				l = ""
			}
			dt.rows = append(dt.rows, []string{l, c, b.String(), cv.String(), fmtDelta(cv - b), fmtPct(pc, ok)})
		}
	}
	dt.write(p)
}

// findings lists new, resolved and re-graded findings.
func (o *textOut) findings(res *compare.Result) {
	md, p, bullet := o.md, o.p, o.bullet
	list := func(title string, fs []model.Finding) {
		p("%s%s (%d)\n", bullet, title, len(fs))
		for i := range fs {
			f := &fs[i]
			if md {
				p("  - **%s** `%s`: %s\n", f.Severity, f.Rule, f.Title)
			} else {
				p("    [%s] %s: %s\n", f.Severity, f.Rule, f.Title)
			}
		}
	}
	list("new in candidate", res.NewFindings)
	list("resolved since base", res.Resolved)
	if len(res.SeverityChanges) > 0 {
		p("%sseverity changed (%d)\n", bullet, len(res.SeverityChanges))
		for _, c := range res.SeverityChanges {
			if md {
				p("  - **%s → %s** `%s`: %s\n", c.From, c.To, c.Rule, c.Title)
			} else {
				p("    [%s → %s] %s: %s\n", c.From, c.To, c.Rule, c.Title)
			}
		}
	}
}

// gate says which quantities regressed past --fail-pct, or that none did.
func (o *textOut) gate(res *compare.Result) {
	p, bullet := o.p, o.bullet
	if res.Regressed() {
		for _, r := range res.Regressions {
			p("%sREGRESSION %s %+.1f%% > %.1f%%\n", bullet, r.Quantity, r.Pct, r.Limit)
		}
	} else {
		p("%spassed: span, step time and GPU busy time within +%.1f%%\n", bullet, res.FailPct)
	}
}

// JSON wire form (versioned, separate from the Go types).

// JSONSchema names the JSON shape of a diff.
const JSONSchema = "tracedx.diff/v1"

type jsonInput struct {
	Path   string `json:"path"`
	Format string `json:"format"`
	Rank   *int   `json:"rank"`
}

type jsonQuantity struct {
	Name    string   `json:"name"`
	Known   bool     `json:"known"`
	BaseNs  *int64   `json:"base_ns"`
	CandNs  *int64   `json:"candidate_ns"`
	DeltaNs *int64   `json:"delta_ns"`
	Pct     *float64 `json:"pct"`
	Source  string   `json:"source,omitempty"`
	Why     string   `json:"why,omitempty"`
}

type jsonKernel struct {
	Name      string   `json:"name"`
	BaseCount int64    `json:"base_count"`
	CandCount int64    `json:"candidate_count"`
	BaseNs    int64    `json:"base_total_ns"`
	CandNs    int64    `json:"candidate_total_ns"`
	DeltaNs   int64    `json:"delta_ns"`
	Pct       *float64 `json:"pct"`
	Status    string   `json:"status,omitempty"`
}

type jsonClass struct {
	Class   string   `json:"class"`
	BaseNs  int64    `json:"base_ns"`
	CandNs  int64    `json:"candidate_ns"`
	DeltaNs int64    `json:"delta_ns"`
	Pct     *float64 `json:"pct"`
}

type jsonDevice struct {
	Rank        *int        `json:"rank"`
	Device      int32       `json:"device"`
	CandRank    *int        `json:"candidate_rank,omitempty"`
	CandDevice  *int32      `json:"candidate_device,omitempty"`
	Name        string      `json:"name"`
	InBase      bool        `json:"in_base"`
	InCandidate bool        `json:"in_candidate"`
	Classes     []jsonClass `json:"classes"`
	BaseSpanNs  int64       `json:"base_span_ns"`
	CandSpanNs  int64       `json:"candidate_span_ns"`
	BaseBusyNs  int64       `json:"base_busy_ns"`
	CandBusyNs  int64       `json:"candidate_busy_ns"`
	BaseKernels int64       `json:"base_kernels"`
	CandKernels int64       `json:"candidate_kernels"`
	BaseMemOps  int64       `json:"base_memops"`
	CandMemOps  int64       `json:"candidate_memops"`
}

type jsonFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Message  string `json:"message"`
}

type jsonSevChange struct {
	Rule  string `json:"rule"`
	Title string `json:"title"`
	From  string `json:"from"`
	To    string `json:"to"`
}

type jsonRegression struct {
	Quantity string  `json:"quantity"`
	Pct      float64 `json:"pct"`
	LimitPct float64 `json:"limit_pct"`
}

type jsonDiff struct {
	Schema      string           `json:"schema"`
	Base        []jsonInput      `json:"base"`
	Candidate   []jsonInput      `json:"candidate"`
	Comparable  bool             `json:"comparable"`
	Problems    []string         `json:"problems"`
	Overlap     float64          `json:"kernel_name_overlap"`
	Quantities  []jsonQuantity   `json:"quantities"`
	Kernels     []jsonKernel     `json:"kernels"`
	Devices     []jsonDevice     `json:"devices"`
	NewFindings []jsonFinding    `json:"new_findings"`
	Resolved    []jsonFinding    `json:"resolved_findings"`
	SevChanges  []jsonSevChange  `json:"severity_changes"`
	FailPct     *float64         `json:"fail_on_regression_pct"`
	Regressions []jsonRegression `json:"regressions"`
	Regressed   bool             `json:"regressed"`
}

func round2(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*100) / 100
}

func pctPtr(p float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	v := round2(p)
	return &v
}

func i64(d model.Duration) *int64 { v := int64(d); return &v }

func rankPtr(r int) *int {
	if r == model.NoRank {
		return nil
	}
	return &r
}

func jsonInputs(in []model.Input) []jsonInput {
	out := make([]jsonInput, len(in))
	for i, x := range in {
		out[i] = jsonInput{Path: x.Path, Format: string(x.Format), Rank: rankPtr(x.Rank)}
	}
	return out
}

func jsonFindings(fs []model.Finding) []jsonFinding {
	out := make([]jsonFinding, len(fs))
	for i, f := range fs {
		out[i] = jsonFinding{Rule: f.Rule, Severity: f.Severity.String(), Title: f.Title, Message: f.Message}
	}
	return out
}

func renderJSON(w io.Writer, res *compare.Result) error {
	d := jsonDiff{Schema: JSONSchema, Base: jsonInputs(res.BaseInputs), Candidate: jsonInputs(res.CandInputs),
		Comparable: res.Comparable, Problems: append([]string{}, res.Problems...),
		Kernels: []jsonKernel{}, Devices: []jsonDevice{}, NewFindings: jsonFindings(res.NewFindings), Resolved: jsonFindings(res.Resolved),
		Regressions: []jsonRegression{}, Regressed: res.Regressed(), SevChanges: []jsonSevChange{}}
	for _, c := range res.SeverityChanges {
		d.SevChanges = append(d.SevChanges, jsonSevChange{Rule: c.Rule, Title: c.Title, From: c.From.String(), To: c.To.String()})
	}
	d.Overlap = math.Round(res.Overlap*10000) / 10000
	for _, q := range res.Quantities {
		jq := jsonQuantity{Name: q.Name, Known: q.Known, Source: q.Source, Why: q.Why}
		if q.Known {
			jq.BaseNs, jq.CandNs, jq.DeltaNs = i64(q.Base), i64(q.Cand), i64(q.Delta())
			jq.Pct = pctPtr(q.Pct())
		}
		d.Quantities = append(d.Quantities, jq)
	}
	for i := range res.Kernels {
		k := &res.Kernels[i]
		d.Kernels = append(d.Kernels, jsonKernel{Name: k.Name, BaseCount: k.BaseCount, CandCount: k.CandCount,
			BaseNs: int64(k.BaseTotal), CandNs: int64(k.CandTotal), DeltaNs: int64(k.Delta()), Pct: pctPtr(k.Pct()), Status: k.Status()})
	}
	for i := range res.Devices {
		dv := &res.Devices[i]
		jd := jsonDevice{Rank: rankPtr(dv.Rank), Device: int32(dv.Device), Name: dv.Name, InBase: dv.InBase, InCandidate: dv.InCan,
			BaseSpanNs: int64(dv.Base.Span), CandSpanNs: int64(dv.Cand.Span), BaseBusyNs: int64(dv.Base.Busy), CandBusyNs: int64(dv.Cand.Busy),
			BaseKernels: dv.Base.Kernels, CandKernels: dv.Cand.Kernels, BaseMemOps: dv.Base.MemOps, CandMemOps: dv.Cand.MemOps,
		}
		if dv.Paired {
			cd := int32(dv.Cand.Device)
			jd.CandRank, jd.CandDevice = rankPtr(dv.Cand.Rank), &cd
		}
		for _, c := range compare.Classes {
			b, cv := dv.Class(c)
			jd.Classes = append(jd.Classes, jsonClass{Class: c, BaseNs: int64(b), CandNs: int64(cv), DeltaNs: int64(cv - b), Pct: pctPtr(compare.Pct(b, cv, dv.InBase && dv.InCan))})
		}
		d.Devices = append(d.Devices, jd)
	}
	if res.FailPct > 0 {
		v := res.FailPct
		d.FailPct = &v
	}
	for _, r := range res.Regressions {
		d.Regressions = append(d.Regressions, jsonRegression{Quantity: r.Quantity, Pct: round2(r.Pct), LimitPct: r.Limit})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// DiffClass is the JUnit classname of diff test cases.
const DiffClass = "tracedx.diff"

func renderJUnit(w io.Writer, res *compare.Result) error {
	s := junit.Suite{Name: "tracedx diff"}
	s.Properties = append(s.Properties, [2]string{"base", inputsLine(res.BaseInputs)}, [2]string{"candidate", inputsLine(res.CandInputs)})
	cmp := junit.Case{Name: "comparable", Classname: DiffClass, SystemOut: fmt.Sprintf("kernel-name overlap %.1f%%", 100*res.Overlap)}
	if !res.Comparable {
		cmp.Failure = &junit.Problem{Type: "not-comparable", Message: "not comparable: " + strings.Join(res.Problems, "; "), Text: strings.Join(res.Problems, "\n")}
	}
	s.Cases = append(s.Cases, cmp)
	regressed := map[string]compare.Regression{}
	for _, r := range res.Regressions {
		regressed[r.Quantity] = r
	}
	for _, q := range res.Quantities {
		c := junit.Case{Name: q.Name, Classname: DiffClass}
		if !q.Known {
			c.IsSkipped, c.Skipped = true, "not measurable: "+q.Why
			s.Cases = append(s.Cases, c)
			continue
		}
		pc, ok := q.Pct()
		c.SystemOut = fmt.Sprintf("base %s, candidate %s, delta %s (%s), %s", q.Base, q.Cand, fmtDelta(q.Delta()), fmtPct(pc, ok), q.Source)
		if r, bad := regressed[q.Name]; bad {
			c.Failure = &junit.Problem{Type: "regression", Message: fmt.Sprintf("%s regressed %+.1f%% (limit %.1f%%)", q.Label, r.Pct, r.Limit), Text: c.SystemOut}
		}
		s.Cases = append(s.Cases, c)
	}
	nf := junit.Case{Name: "new findings", Classname: DiffClass}
	var lines []string
	for _, f := range res.NewFindings {
		lines = append(lines, fmt.Sprintf("[%s] %s: %s", f.Severity, f.Rule, f.Title))
	}
	nf.SystemOut = strings.Join(lines, "\n")
	s.Cases = append(s.Cases, nf)
	return junit.Write(w, []junit.Suite{s})
}
