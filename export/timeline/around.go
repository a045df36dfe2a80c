package timeline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// ParseRange parses "START_NS:END_NS" (integers, START <= END) into a time
// range (the argument of export --range).
func ParseRange(s string) (model.Interval, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return model.Interval{}, fmt.Errorf("range %q: want START_NS:END_NS", s)
	}
	st, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	en, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil {
		return model.Interval{}, fmt.Errorf("range %q: want START_NS:END_NS in integer nanoseconds", s)
	}
	if en < st {
		return model.Interval{}, fmt.Errorf("range %q: end before start", s)
	}
	return model.Interval{Start: model.Time(st), End: model.Time(en)}, nil
}

// FindingRefs names every finding "RULE#N", N counting from 1 among the
// findings of the same rule in the order given (the report's order).
func FindingRefs(findings []model.Finding) []string {
	seen := map[string]int{}
	out := make([]string, len(findings))
	for i := range findings {
		seen[findings[i].Rule]++
		out[i] = findings[i].Rule + "#" + strconv.Itoa(seen[findings[i].Rule])
	}
	return out
}

// RankOffset returns the set clock offset of the trace of the given rank (0
// when the rank is unknown or the set has no offsets). A set of one trace
// uses that trace's offset for every rank.
func RankOffset(set *model.TraceSet, rank int) model.Duration {
	if set == nil {
		return 0
	}
	for i, t := range set.Traces {
		if (t.Rank == rank || len(set.Traces) == 1) && i < len(set.Offsets) {
			return set.Offsets[i]
		}
	}
	return 0
}

// DefaultPad returns the padding put around an evidence window of length d:
// half its length, at least 100 µs.
func DefaultPad(d model.Duration) model.Duration {
	p := d / 2
	if p < 100*model.Microsecond {
		p = 100 * model.Microsecond
	}
	return p
}

// AroundFinding returns the window around the finding named by spec, on the
// set's clock. spec is "RULE" (its first finding), "RULE#N" (its N-th
// finding, from 1) and optionally "@E" to pick the E-th evidence entry (from
// 1; default the first, which detectors fill with the worst instance). The
// evidence window is widened by pad on each side (DefaultPad when pad < 0).
func AroundFinding(set *model.TraceSet, findings []model.Finding, spec string, pad model.Duration) (model.Interval, *model.Finding, error) {
	s := strings.TrimSpace(spec)
	ev := 1
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 {
			return model.Interval{}, nil, fmt.Errorf("--around %q: evidence index after @ must be a number from 1", spec)
		}
		ev, s = n, s[:i]
	}
	rule, nth := s, 1
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 {
			return model.Interval{}, nil, fmt.Errorf("--around %q: finding index after # must be a number from 1", spec)
		}
		rule, nth = s[:i], n
	}
	count := 0
	var rules []string
	for i := range findings {
		f := &findings[i]
		if f.Rule != rule {
			if len(rules) == 0 || rules[len(rules)-1] != f.Rule {
				rules = append(rules, f.Rule)
			}
			continue
		}
		count++
		if count != nth {
			continue
		}
		if len(f.Evidence) == 0 {
			return model.Interval{}, f, fmt.Errorf("--around %s: the finding has no evidence on the timeline", spec)
		}
		if ev > len(f.Evidence) {
			return model.Interval{}, f, fmt.Errorf("--around %s: the finding has %d evidence entries", spec, len(f.Evidence))
		}
		e := f.Evidence[ev-1]
		off := RankOffset(set, e.Rank)
		iv := model.Interval{Start: e.Start.Add(off), End: e.End.Add(off)}
		if iv.End < iv.Start {
			iv.End = iv.Start
		}
		if pad < 0 {
			pad = DefaultPad(iv.Len())
		}
		iv.Start, iv.End = iv.Start.Add(-pad), iv.End.Add(pad)
		return iv, f, nil
	}
	if count == 0 {
		return model.Interval{}, nil, fmt.Errorf("--around %s: no finding of rule %q (findings: %s)", spec, rule, listOrNone(rules))
	}
	return model.Interval{}, nil, fmt.Errorf("--around %s: rule %s has %d finding(s)", spec, rule, count)
}

func listOrNone(rules []string) string {
	if len(rules) == 0 {
		return "none"
	}
	seen := map[string]bool{}
	var uniq []string
	for _, r := range rules {
		if !seen[r] {
			seen[r] = true
			uniq = append(uniq, r)
		}
	}
	return strings.Join(uniq, ", ")
}
