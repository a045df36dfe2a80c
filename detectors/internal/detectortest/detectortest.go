// Package detectortest runs a rule's table of fixtures for its tests: each
// fixture is built, validated and analysed by the rule alone, and the
// outcome every rule shares (no rule error, the expected not-measurable
// reason, the expected number of findings) is checked here; the rule's test
// checks its own findings.
//
// RunCases takes any value with the methods of *testing.T it needs, so
// that subtests receive the caller's test type. CorpusTraces runs a rule's
// checks over the real traces of the shared corpus.
package detectortest

import (
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// T is the part of *testing.T that RunCases uses; Self is the test type
// itself (*testing.T), so that subtests receive it.
type T[Self any] interface {
	Helper()
	Fatalf(format string, args ...any)
	Run(name string, f func(Self)) bool
}

// Case is one fixture of a rule's table.
type Case struct {
	Name  string
	Build func() *model.Trace
	// NotMeasurable, when set, is a substring of the one not-measurable
	// reason the rule must give; when empty the rule must give none.
	NotMeasurable string
	// Findings is how many findings the rule must report.
	Findings int
}

// Kinds of cases; each rule's tests run every kind.
const (
	Planted       = "planted"        // at least one finding
	Clean         = "clean"          // no finding, no not-measurable reason
	NotMeasurable = "not-measurable" // no finding, a not-measurable reason
)

// Kind returns the kind of c.
func (c Case) Kind() string {
	switch {
	case c.Findings > 0:
		return Planted
	case c.NotMeasurable != "":
		return NotMeasurable
	}
	return Clean
}

// RunCases runs det over every case of the given kind as a subtest, checks
// the shared outcome, and hands the findings of planted cases to check
// (with the index of the case in cases). It fails when no case is of kind.
func RunCases[TB T[TB]](t TB, det *detectors.Detector, kind string, cases []Case, check func(t TB, i int, fs []model.Finding)) {
	t.Helper()
	n := 0
	for i, c := range cases {
		if c.Kind() != kind {
			continue
		}
		n++
		t.Run(c.Name, func(t TB) {
			tr := c.Build()
			if err := tr.Validate(); err != nil {
				t.Fatalf("fixture invalid: %v", err)
			}
			res := detectors.Run(fixture.Set(tr), []*detectors.Detector{det}, detectors.Config{})
			if len(res.Errors) > 0 {
				t.Fatalf("%v", res.Errors)
			}
			if c.NotMeasurable != "" {
				if len(res.NotMeasurable) != 1 || !strings.Contains(res.NotMeasurable[0].Reason, c.NotMeasurable) {
					t.Fatalf("want not measurable %q, got %+v", c.NotMeasurable, res.NotMeasurable)
				}
			} else if len(res.NotMeasurable) != 0 {
				t.Fatalf("unexpected not measurable: %+v", res.NotMeasurable)
			}
			if len(res.Findings) != c.Findings {
				t.Fatalf("want %d findings, got %d: %+v", c.Findings, len(res.Findings), res.Findings)
			}
			if c.Findings > 0 && check != nil {
				check(t, i, res.Findings)
			}
		})
	}
	if n == 0 {
		t.Fatalf("no fixtures of kind %s", kind)
	}
}
