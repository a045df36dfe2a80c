package policy

import (
	"fmt"
	"math"

	"github.com/tracedx/tracedx/model"
)

// GateResult is the outcome of one gate condition on one report; the type
// lives in model so that renderers (JUnit) need not import policy.
type GateResult = model.GateResult

// Evaluate checks every gate against r. A gate whose metric has no sample is
// not measurable: it fails (message "not measurable"), unless it is optional,
// in which case it passes as skipped. With several samples (one per device,
// finding or run) every sample must satisfy the gate.
func (p *Policy) Evaluate(r *model.Report) []GateResult {
	if p == nil || len(p.Gates) == 0 {
		return nil
	}
	return EvaluateSamples(p.Gates, Metrics(r))
}

// EvaluateSamples checks gates against precomputed samples.
func EvaluateSamples(gates []Gate, samples []Sample) []GateResult {
	byName := map[string][]Sample{}
	for _, s := range samples {
		byName[s.Name] = append(byName[s.Name], s)
	}
	out := make([]GateResult, 0, len(gates))
	for _, g := range gates {
		out = append(out, evaluate(g, byName[g.Metric]))
	}
	return out
}

func evaluate(g Gate, ss []Sample) GateResult {
	res := GateResult{Condition: g.Condition(), Name: g.Label(), Metric: g.Metric, Line: g.Line}
	if len(ss) == 0 {
		res.Passed = g.Optional
		res.Skipped = g.Optional
		if g.Max != nil {
			res.Limit = *g.Max
		} else if g.Min != nil {
			res.Limit = *g.Min
		}
		if g.Optional {
			res.Message = fmt.Sprintf("%s: not measurable on this input (optional gate skipped)", g.Metric)
		} else {
			res.Message = fmt.Sprintf("%s: not measurable on this input, so the gate cannot pass", g.Metric)
		}
		return res
	}
	res.Measurable = true
	// Find the worst violation; with none, the sample closest to a limit.
	var worst *Sample
	worstBy := 0.0
	var worstLimit float64
	for i := range ss {
		s := &ss[i]
		if g.Max != nil && s.Value > *g.Max {
			if d := s.Value - *g.Max; worst == nil || d > worstBy {
				worst, worstBy, worstLimit = s, d, *g.Max
			}
		}
		if g.Min != nil && s.Value < *g.Min {
			if d := *g.Min - s.Value; worst == nil || d > worstBy {
				worst, worstBy, worstLimit = s, d, *g.Min
			}
		}
	}
	if worst != nil {
		res.Measured, res.Scope, res.Limit = worst.Value, worst.Scope, worstLimit
		word := "above"
		if worst.Value < worstLimit {
			word = "below"
		}
		res.Message = fmt.Sprintf("%s = %s%s is %s the limit %s", g.Metric, FormatValue(round(worst.Value)), scopeSuffix(worst.Scope), word, FormatValue(worstLimit))
		if len(ss) > 1 {
			res.Message += fmt.Sprintf(" (%d samples)", len(ss))
		}
		return res
	}
	res.Passed = true
	closest := &ss[0]
	best := -1.0
	for i := range ss {
		s := &ss[i]
		d := 0.0
		switch {
		case g.Max != nil && g.Min != nil:
			d = min(*g.Max-s.Value, s.Value-*g.Min)
		case g.Max != nil:
			d = *g.Max - s.Value
		default:
			d = s.Value - *g.Min
		}
		if best < 0 || d < best {
			closest, best = s, d
		}
	}
	res.Measured, res.Scope = closest.Value, closest.Scope
	if g.Max != nil && (g.Min == nil || *g.Max-closest.Value <= closest.Value-*g.Min) {
		res.Limit = *g.Max
	} else {
		res.Limit = *g.Min
	}
	res.Message = fmt.Sprintf("%s = %s%s is within %s", g.Metric, FormatValue(round(closest.Value)), scopeSuffix(closest.Scope), res.Condition)
	return res
}

func scopeSuffix(scope string) string {
	if scope == "" {
		return ""
	}
	return " (" + scope + ")"
}

// round keeps messages readable: 4 decimals at most.
func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// AllPassed reports whether every result passed.
func AllPassed(rs []GateResult) bool {
	for _, r := range rs {
		if !r.Passed {
			return false
		}
	}
	return true
}
