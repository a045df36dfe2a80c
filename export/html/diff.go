package html

import (
	"bufio"
	"fmt"
	"io"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/model"
)

// Diff writes a comparison of two runs as an HTML page: the headline
// quantities, before/after bars per device and class, per kernel class and
// per kernel, and the findings that appeared or went away.
func Diff(w io.Writer, res *compare.Result) error { return DiffReports(w, res, nil, nil) }

// DiffReports is Diff with the two sides' reports, which add the
// before/after bars per step.
func DiffReports(w io.Writer, res *compare.Result, base, cand *model.Report) error {
	p := &page{b: bufio.NewWriter(w)}
	p.head("tracedx diff")
	p.f("<h1>tracedx diff</h1>\n<p>Base: %s. Candidate: %s.</p>\n", inputsList(res.BaseInputs), inputsList(res.CandInputs))
	if !res.Comparable {
		p.f("<p class=\"sev-warning\">Not comparable:</p>\n<ul>\n")
		for _, pr := range res.Problems {
			p.f("<li>%s</li>\n", esc(pr))
		}
		p.f("</ul>\n")
	}
	if len(res.Regressions) > 0 {
		p.f("<p class=\"sev-error\">Regressions beyond %.1f%%:</p>\n<ul>\n", res.FailPct)
		for _, rg := range res.Regressions {
			p.f("<li>%s: %+.1f%%</li>\n", esc(rg.Quantity), rg.Pct)
		}
		p.f("</ul>\n")
	}
	p.f("<h2>Headline</h2>\n<table>\n<tr><th>quantity</th><th>base</th><th>candidate</th><th>change</th></tr>\n")
	var qrows []hbar
	var qmax float64
	for _, q := range res.Quantities {
		change := "-"
		if pc, ok := q.Pct(); ok {
			change = fmt.Sprintf("%+.1f%%", pc)
		}
		if !q.Known {
			p.f("<tr><td>%s</td><td colspan=\"3\" class=\"muted\">%s</td></tr>\n", esc(q.Label), esc(q.Why))
			continue
		}
		p.f("<tr><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", esc(q.Label), q.Base, q.Cand, change)
		qmax = max(qmax, float64(q.Base), float64(q.Cand))
		qrows = append(qrows,
			hbar{label: q.Label + " (base)", value: q.Base.String(), segs: []seg{{v: float64(q.Base), class: cIdle, tip: "base " + q.Base.String()}}},
			hbar{label: q.Label + " (candidate)", value: q.Cand.String() + " " + change, segs: []seg{{v: float64(q.Cand), class: cCompute, tip: "candidate " + q.Cand.String()}}})
	}
	p.f("</table>\n")
	if len(qrows) > 0 {
		p.f("%s\n", hbars("Headline quantities, base vs candidate", qrows, qmax, []seg{{class: cIdle, label: "base"}, {class: cCompute, label: "candidate"}}))
	}
	if len(res.Devices) > 0 {
		p.f("<h2>Per device and class</h2>\n")
		var rows []hbar
		var mx float64
		classCls := map[string]string{"compute": cCompute, "communication": cComm, "memory": cMemory, "idle": cIdle}
		for _, d := range res.Devices {
			if !d.InBase || !d.InCan {
				continue
			}
			for _, side := range []struct {
				name string
				s    model.DeviceSummary
			}{{"base", d.Base}, {"candidate", d.Cand}} {
				var segs []seg
				var tot float64
				for _, c := range compare.Classes {
					b, cd := d.Class(c)
					v := b
					if side.name == "candidate" {
						v = cd
					}
					segs = append(segs, seg{v: float64(v), class: classCls[c], tip: fmt.Sprintf("%s %s: %s", side.name, c, v)})
					tot += float64(v)
				}
				mx = max(mx, tot)
				// Paired devices differ in (rank, device): each row names its own.
				rows = append(rows, hbar{label: fmt.Sprintf("%s (%s)", devLabel(side.s.Rank, side.s.Device), side.name), value: fmt.Sprintf("span %s", side.s.Span), segs: segs})
			}
		}
		if len(rows) > 32 {
			rows = rows[:32]
		}
		if len(rows) > 0 {
			p.f("%s\n", hbars("Time per class, base vs candidate", rows, mx, []seg{{class: cCompute, label: "compute"}, {class: cComm, label: "communication"}, {class: cMemory, label: "memory"}, {class: cIdle, label: "idle"}}))
		}
	}
	writeDiffSteps(p, base, cand)
	writeDiffClasses(p, res)
	if len(res.Kernels) > 0 {
		n := min(len(res.Kernels), 12)
		var rows []hbar
		var mx float64
		for _, k := range res.Kernels[:n] {
			mx = max(mx, float64(k.BaseTotal), float64(k.CandTotal))
		}
		for _, k := range res.Kernels[:n] {
			ch := k.Status()
			if pc, ok := k.Pct(); ok && ch == "" {
				ch = fmt.Sprintf("%+.1f%%", pc)
			}
			name := export.Shorten(k.Name)
			rows = append(rows,
				hbar{label: name, value: "base " + k.BaseTotal.String(), segs: []seg{{v: float64(k.BaseTotal), class: cIdle, tip: name + " base " + k.BaseTotal.String()}}},
				hbar{label: "", value: "candidate " + k.CandTotal.String() + " " + ch, segs: []seg{{v: float64(k.CandTotal), class: cCompute, tip: name + " candidate " + k.CandTotal.String()}}})
		}
		p.f("<h2>Kernels that changed most</h2>\n%s\n", hbars("Kernel time, base vs candidate", rows, mx, []seg{{class: cIdle, label: "base"}, {class: cCompute, label: "candidate"}}))
	}
	list := func(title string, fs []model.Finding) {
		if len(fs) == 0 {
			return
		}
		p.f("<h2>%s</h2>\n<ul>\n", esc(title))
		for _, f := range fs {
			p.f("<li><span class=\"sev-%s\">%s</span> %s: %s</li>\n", f.Severity, f.Severity, code(f.Rule), esc(f.Title))
		}
		p.f("</ul>\n")
	}
	list("New findings in the candidate", res.NewFindings)
	list("Resolved since the base", res.Resolved)
	p.end()
	return p.b.Flush()
}

func inputsList(ins []model.Input) string {
	s := ""
	for i, in := range ins {
		if i > 0 {
			s += ", "
		}
		if i == 8 {
			return s + fmt.Sprintf("… %d more", len(ins)-8)
		}
		s += code(baseName(in.Path))
	}
	return s
}
