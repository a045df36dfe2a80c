package export_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/export/junit"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
)

// hostileNames are kernel names that try to break out of their place in a
// report: HTML, Markdown fences and tables, terminal escapes, huge names.
var hostileNames = []string{
	"<script>alert(1)</script>",
	"```\n</details><script>alert(2)</script>",
	"a|b|c `x` ``y``",
	"\x1b[31mred\x1b[0m\x00nul\rcr\nnewline",
	strings.Repeat("K", 10<<10),
	"void f<float>(T&, U*) [with T = <unnamed>]",
}

func hostileReport(t *testing.T) *model.Report {
	t.Helper()
	b := fixture.New("hostile <x>.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Device(0, "GPU <b>0</b>")
	at := 0.0
	for i := 0; i < 3; i++ {
		for _, n := range hostileNames {
			b.Kernel(0, 7, n, at, at+10, th, at-6)
			at += 70 // gaps: kernel-gap findings with these names nearby
		}
	}
	b.Range(th, model.RangeUser, "<img src=x onerror=alert(3)>", 0, at)
	r := pipeline.AnalyzeSet(model.NewTraceSet([]*model.Trace{b.Build()}), pipeline.Options{})
	r.Findings = append(r.Findings, model.Finding{Rule: "kernel-gap", Severity: model.SevWarning, Layer: model.LayerKernel,
		Title: "slow `kernel` <script>alert(4)</script> | x", Message: "```\n</details><script>alert(5)</script>", Confidence: model.Measured,
		Evidence: []model.Evidence{{Rank: model.NoRank, Device: 0, Stream: 7, Thread: -1, Start: 0, End: 10, Note: "\x1b]0;title\x07 <b>"}}})
	return r
}

// outsideCode returns md without its code spans (fence = a run of n
// backticks closed by a run of exactly n).
func outsideCode(md string) string {
	var out strings.Builder
	for i := 0; i < len(md); {
		if md[i] != '`' {
			out.WriteByte(md[i])
			i++
			continue
		}
		n := 0
		for i+n < len(md) && md[i+n] == '`' {
			n++
		}
		j := i + n
		closed := -1
		for k := j; k < len(md); {
			if md[k] != '`' {
				k++
				continue
			}
			m := 0
			for k+m < len(md) && md[k+m] == '`' {
				m++
			}
			if m == n {
				closed = k + m
				break
			}
			k += m
		}
		if closed < 0 {
			out.WriteString(md[i:j])
			i = j
			continue
		}
		i = closed
	}
	return out.String()
}

func TestHostileNames(t *testing.T) {
	r := hostileReport(t)
	render := func(format string) string {
		var buf bytes.Buffer
		if err := export.RenderOpts(&buf, r, format, export.Options{Full: true}); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	txt := render("text")
	for _, bad := range []string{"\x1b", "\x00", "\r", "\x07", "\nnewline", strings.Repeat("K", 5000)} {
		if strings.Contains(txt, bad) {
			t.Errorf("text report holds %q", bad)
		}
	}
	if !strings.Contains(txt, `\x1b[31mred`) {
		t.Errorf("text report does not show escapes / shortened names")
	}
	md := render("md")
	plain := outsideCode(md)
	for _, bad := range []string{"<script", "</details><script", "<img", "<b>", "\x1b", "\x00", "\r"} {
		if strings.Contains(plain, bad) {
			t.Errorf("Markdown outside code spans holds %q", bad)
		}
	}
	if strings.Contains(md, strings.Repeat("K", 5000)) || !strings.Contains(md, "10240 bytes, sha256 ") {
		t.Errorf("Markdown must shorten the 10 KB name with a hash")
	}
	// Every table row keeps its column count: no pipe escapes its cell.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "a\\|b") {
			cells := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
			if cells != 13 && cells != 5 && cells != 11 && cells != 8 {
				t.Errorf("table row has %d pipes: %q", cells, line)
			}
		}
	}
	if strings.Contains(md, "e+") || strings.Contains(md, "e-0") {
		for _, l := range strings.Split(md, "\n") {
			if strings.Contains(l, "e+") {
				t.Errorf("scientific notation in %q", l)
			}
		}
	}
	var js bytes.Buffer
	if err := export.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(js.String(), "\x1b") || !strings.Contains(js.String(), `\u001b`) {
		t.Errorf("JSON must escape control characters (and keep names whole)")
	}
	var ju bytes.Buffer
	if err := junit.Write(&ju, []junit.Suite{junit.FromReport("hostile <x>", r, nil, junit.Options{FailOn: model.SevWarning})}); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&ju)
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("JUnit is not well-formed XML: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "script" || se.Name.Local == "b") {
			t.Errorf("JUnit holds a <%s> element", se.Name.Local)
		}
	}
}

// TestMaxNameBytes: the cap shortens with a hash; two long names differ;
// the renderers take it from Options (--max-name-bytes), 0 = the default
// and a negative value = no cap.
func TestMaxNameBytes(t *testing.T) {
	a, b := strings.Repeat("x", 200)+"a", strings.Repeat("x", 200)+"b"
	sa, sb := export.ShortenName(a, 100), export.ShortenName(b, 100)
	if len(sa) > 100 || sa == sb || !strings.Contains(sa, "201 bytes") {
		t.Errorf("shortened: %q / %q", sa, sb)
	}
	if export.ShortenName(a, 0) != a || export.ShortenName(a, 201) != a {
		t.Errorf("no cap, or a name at the cap, must stay whole")
	}
	long := "kernel_" + strings.Repeat("y", 10000)
	r := &model.Report{Kernels: []model.KernelSummary{{Name: long, Count: 1, Total: 1000}},
		Devices: []model.DeviceSummary{{Device: 0, Span: 2000, Busy: 1000, Compute: 1000, Idle: 1000, Kernels: 1}}}
	for _, format := range []string{"md"} { // text cuts table names to the column anyway
		for _, tc := range []struct {
			max     int
			whole   bool
			maxSize int
		}{{0, false, export.DefaultMaxNameBytes}, {100, false, 100}, {-1, true, 0}} {
			var buf bytes.Buffer
			if err := export.RenderOpts(&buf, r, format, export.Options{MaxNameBytes: tc.max, Full: true}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Contains(out, long) != tc.whole {
				t.Errorf("%s, cap %d: whole name written = %v", format, tc.max, !tc.whole)
			}
			if !tc.whole && !strings.Contains(out, "…[10007 bytes, sha256 ") {
				t.Errorf("%s, cap %d: no shortened name in\n%.300s", format, tc.max, out)
			}
		}
	}
}

// TestMarkdownSize64Ranks: a generated 64-rank job fits a GitHub comment,
// with the summary first; --detail full holds everything.
func TestMarkdownSize64Ranks(t *testing.T) {
	var traces []*model.Trace
	for i := 0; i < 64; i++ {
		tr := fixture.Example()
		tr.Rank = i
		tr.Path = fmt.Sprintf("job/rank%02d.pt.trace.json", i)
		traces = append(traces, tr)
	}
	r := pipeline.AnalyzeSet(model.NewTraceSet(traces), pipeline.Options{})
	var md, full bytes.Buffer
	if err := export.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := export.RenderOpts(&full, r, "md", export.Options{Full: true}); err != nil {
		t.Fatal(err)
	}
	t.Logf("64 ranks: %d findings; Markdown %d bytes (full %d)", len(r.Findings), md.Len(), full.Len())
	if md.Len() > export.MaxMarkdownBytes {
		t.Errorf("Markdown of 64 ranks is %d bytes, over %d", md.Len(), export.MaxMarkdownBytes)
	}
	if full.Len() <= md.Len() {
		t.Errorf("--detail full (%d bytes) should hold more than the ticket form (%d)", full.Len(), md.Len())
	}
	s := md.String()
	if i, j := strings.Index(s, "## Summary\n"), strings.Index(s, "## Findings"); i < 0 || j < i {
		t.Errorf("summary must come before the findings")
	}
	if strings.Count(s, "<details>") != strings.Count(s, "</details>") {
		t.Errorf("unbalanced <details>")
	}
}
