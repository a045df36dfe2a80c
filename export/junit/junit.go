package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Never is a fail-on level above every severity: no finding fails.
const Never = model.SevError + 1

// Classnames of the test cases.
const (
	RuleClass  = "tracedx.rule"
	GateClass  = "tracedx.gate"
	InputClass = "tracedx.input"
)

// Suite is one input's test suite.
type Suite struct {
	Name       string
	Properties [][2]string
	Cases      []Case
}

// Case is one test case. At most one of Failure, Error and Skipped is set.
type Case struct {
	Name      string
	Classname string
	Failure   *Problem
	Error     *Problem
	// Skipped holds the reason when the case was skipped.
	Skipped   string
	IsSkipped bool
	SystemOut string
}

// Problem is a failure or an error.
type Problem struct {
	Type    string
	Message string
	Text    string
}

// Options shape how a report becomes a suite.
type Options struct {
	// FailOn: findings at or above it fail their rule's case. Use Never to
	// only record findings.
	FailOn model.Severity
	// Rules lists the rule IDs that were enabled; rules that ran and found
	// nothing become passing cases. Rules that only appear in the report's
	// findings or not-measurable list are added.
	Rules []string
}

// FromReport builds the suite of one input (or one job) from its report and
// the policy's gate results (may be nil).
func FromReport(name string, r *model.Report, gates []model.GateResult, opts Options) Suite {
	s := Suite{Name: name}
	if len(r.Inputs) > 0 {
		in := r.Inputs[0]
		s.Properties = append(s.Properties, [2]string{"format", string(in.Format)})
		if in.Rank >= 0 {
			s.Properties = append(s.Properties, [2]string{"rank", fmt.Sprint(in.Rank)})
		}
	}
	byRule := map[string][]*model.Finding{}
	for i := range r.Findings {
		f := &r.Findings[i]
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	notMeas := map[string][]string{}
	for _, nm := range r.NotMeasurable {
		notMeas[nm.Rule] = append(notMeas[nm.Rule], nm.Reason)
	}
	ids := map[string]bool{}
	for _, id := range opts.Rules {
		ids[id] = true
	}
	for id := range byRule {
		ids[id] = true
	}
	for id := range notMeas {
		ids[id] = true
	}
	sorted := make([]string, 0, len(ids))
	for id := range ids {
		sorted = append(sorted, id)
	}
	sort.Strings(sorted)
	for _, id := range sorted {
		c := Case{Name: id, Classname: RuleClass}
		fs := byRule[id]
		var failing []*model.Finding
		for _, f := range fs {
			if f.Severity >= opts.FailOn {
				failing = append(failing, f)
			}
		}
		switch {
		case len(failing) > 0:
			c.Failure = &Problem{Type: failing[0].Severity.String(), Message: failureMessage(failing), Text: findingsText(failing)}
			if len(fs) > len(failing) {
				c.SystemOut = findingsText(below(fs, opts.FailOn))
			}
		case len(fs) > 0:
			c.SystemOut = findingsText(fs)
		case len(notMeas[id]) > 0:
			c.IsSkipped = true
			c.Skipped = "not measurable: " + strings.Join(notMeas[id], "; ")
		}
		if len(fs) > 0 && len(notMeas[id]) > 0 {
			c.SystemOut += "not measurable on part of the input: " + strings.Join(notMeas[id], "; ") + "\n"
		}
		s.Cases = append(s.Cases, c)
	}
	for _, g := range gates {
		c := Case{Name: g.Name, Classname: GateClass}
		switch {
		case g.Skipped:
			c.IsSkipped = true
			c.Skipped = g.Message
		case !g.Passed:
			c.Failure = &Problem{Type: "gate", Message: g.Message, Text: fmt.Sprintf("condition: %s\nmeasured: %s%s\nlimit: %s\n",
				g.Condition, measuredText(g), scopeText(g.Scope), formatValue(g.Limit))}
		default:
			c.SystemOut = g.Message + "\n"
		}
		s.Cases = append(s.Cases, c)
	}
	return s
}

// ErrorSuite is the suite of an input that could not be analysed.
func ErrorSuite(name, errText string) Suite {
	return Suite{Name: name, Cases: []Case{{Name: "read input", Classname: InputClass,
		Error: &Problem{Type: "input", Message: firstLine(errText), Text: errText}}}}
}

// formatValue formats a number in its shortest exact form (as policy messages do).
func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func measuredText(g model.GateResult) string {
	if !g.Measurable {
		return "not measurable"
	}
	return formatValue(g.Measured)
}

func scopeText(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func below(fs []*model.Finding, failOn model.Severity) []*model.Finding {
	var out []*model.Finding
	for _, f := range fs {
		if f.Severity < failOn {
			out = append(out, f)
		}
	}
	return out
}

func failureMessage(fs []*model.Finding) string {
	msg := fmt.Sprintf("%s: %s", fs[0].Severity, firstLine(fs[0].Message))
	if fs[0].Message == "" {
		msg = fmt.Sprintf("%s: %s", fs[0].Severity, fs[0].Title)
	}
	if len(fs) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(fs)-1)
	}
	return msg
}

func findingsText(fs []*model.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "[%s] %s: %s\n", f.Severity, f.Title, f.Message)
		for _, m := range f.Metrics {
			fmt.Fprintf(&b, "  metric %s = %s %s\n", m.Name, formatValue(m.Value), m.Unit)
		}
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "  evidence rank %d device %d stream %d thread %d [%d, %d) ns", e.Rank, e.Device, e.Stream, e.Thread, e.Start, e.End)
			if e.Note != "" {
				fmt.Fprintf(&b, ": %s", e.Note)
			}
			b.WriteByte('\n')
		}
		if f.Recommendation != "" {
			fmt.Fprintf(&b, "  fix: %s\n", f.Recommendation)
		}
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Wire types (the JUnit schema as Jenkins, GitLab and GitHub read it).
type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name       string        `xml:"name,attr"`
	Tests      int           `xml:"tests,attr"`
	Failures   int           `xml:"failures,attr"`
	Errors     int           `xml:"errors,attr"`
	Skipped    int           `xml:"skipped,attr"`
	Time       string        `xml:"time,attr"`
	Properties *xmlProps     `xml:"properties,omitempty"`
	Cases      []xmlTestCase `xml:"testcase"`
}

type xmlProps struct {
	Props []xmlProp `xml:"property"`
}

type xmlProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlTestCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Time      string      `xml:"time,attr"`
	Failure   *xmlProblem `xml:"failure,omitempty"`
	Error     *xmlProblem `xml:"error,omitempty"`
	Skipped   *xmlSkipped `xml:"skipped,omitempty"`
	SystemOut *xmlCDATA   `xml:"system-out,omitempty"`
}

type xmlCDATA struct {
	Text string `xml:",cdata"`
}

type xmlProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

type xmlSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// Write renders suites as one <testsuites> document.
func Write(w io.Writer, suites []Suite) error {
	doc := xmlSuites{Name: "tracedx", Time: "0"}
	for _, s := range suites {
		xs := xmlSuite{Name: s.Name, Time: "0"}
		if len(s.Properties) > 0 {
			xs.Properties = &xmlProps{}
			for _, p := range s.Properties {
				xs.Properties.Props = append(xs.Properties.Props, xmlProp{Name: p[0], Value: p[1]})
			}
		}
		for _, c := range s.Cases {
			xc := xmlTestCase{Name: c.Name, Classname: c.Classname, Time: "0"}
			if c.SystemOut != "" {
				xc.SystemOut = &xmlCDATA{Text: clean(c.SystemOut)}
			}
			switch {
			case c.Error != nil:
				xc.Error = &xmlProblem{Message: clean(c.Error.Message), Type: c.Error.Type, Text: clean(c.Error.Text)}
				xs.Errors++
			case c.Failure != nil:
				xc.Failure = &xmlProblem{Message: clean(c.Failure.Message), Type: c.Failure.Type, Text: clean(c.Failure.Text)}
				xs.Failures++
			case c.IsSkipped:
				xc.Skipped = &xmlSkipped{Message: clean(c.Skipped)}
				xs.Skipped++
			}
			xs.Tests++
			xs.Cases = append(xs.Cases, xc)
		}
		doc.Tests += xs.Tests
		doc.Failures += xs.Failures
		doc.Errors += xs.Errors
		doc.Skipped += xs.Skipped
		doc.Suites = append(doc.Suites, xs)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// clean drops characters XML 1.0 cannot carry (control characters other
// than tab, newline and carriage return; invalid UTF-8).
func clean(s string) string {
	ok := true
	for _, r := range s {
		if !validXMLRune(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if validXMLRune(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

func validXMLRune(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' ||
		r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}
