package specdecode

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the spec-decode rule.
var Detector = &detectors.Detector{
	ID:       "spec-decode",
	Title:    "Speculative decoding acceptance",
	Layer:    model.LayerApplication,
	Severity: model.SevWarning,
	Formats:  []model.Format{model.FormatJobLog},
	Params: []detectors.Param{
		{Name: "min_acceptance", Default: 0.5, Unit: "ratio", Doc: "draft acceptance rate below which speculation is flagged"},
		{Name: "draft_cost", Default: 0.1, Unit: "ratio", Doc: "cost of proposing one draft token relative to one target forward pass (EAGLE/MTP heads ~0.05-0.1, a small draft model ~0.1-0.2, n-gram ~0)"},
		{Name: "min_speedup", Default: 1.1, Unit: "x", Doc: "estimated speed-up below which speculation does not pay"},
		{Name: "weak_position", Default: 0.3, Unit: "ratio", Doc: "per-position acceptance below which the later draft positions are wasted"},
	},
	Doc: `Reads speculative-decoding metrics (vLLM V1 "SpecDecoding metrics: … Mean
acceptance length … Per-position acceptance rate … Avg Draft acceptance rate",
V0 "Speculative metrics: Draft acceptance rate … Number of speculative tokens",
SGLang "accept len") per log window and judges whether speculation pays.

Each target step verifies k draft tokens and emits the accepted prefix plus
one token of its own, so the mean acceptance length L (tokens per step, the
bonus token included) is the speed-up in steps. Proposing the k drafts costs
k × draft_cost target-step equivalents, so the estimated speed-up is
L / (1 + k × draft_cost). Below min_speedup speculation does not pay (and
costs KV space and batch capacity): a warning. An acceptance rate below
min_acceptance with an estimate still at or above min_speedup is an info
(tuning k or the proposer gains more; nothing is lost yet). Per-position
acceptance below weak_position shows the later positions are wasted.

## How to fix
- Fewer speculative tokens (num_speculative_tokens) when later positions
  are rarely accepted.
- A better-matched proposer: EAGLE/EAGLE-3 or MTP heads trained for the
  target instead of a generic small model; n-gram only for workloads that
  repeat the prompt (RAG, code edits).
- Disable speculation for this workload (high batch sizes leave little idle
  compute to speculate with) or at high load (speculative_disable_by_batch_size).
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	looked := false
	for _, t := range p.Set.Traces {
		j := t.JobLog
		if j == nil || len(j.Spec) == 0 {
			continue
		}
		looked = true
		name := filepath.Base(t.Path)
		minAcc, cost, minSpeed, weak := p.Param("min_acceptance"), p.Param("draft_cost"), p.Param("min_speedup"), p.Param("weak_position")
		var bad []string
		var worst *model.SpecDecodeStat
		worstSpeed := -1.0
		var rates []string
		for i := range j.Spec {
			s := &j.Spec[i]
			speed := speedup(s, cost)
			rates = append(rates, window(s, speed))
			low := s.AcceptRate >= 0 && s.AcceptRate < minAcc || speed >= 0 && speed < minSpeed
			if low {
				bad = append(bad, fmt.Sprintf("line %d", s.Line))
				if worst == nil || speed >= 0 && speed < worstSpeed || worstSpeed < 0 && s.AcceptRate < worst.AcceptRate {
					worst, worstSpeed = s, speed
				}
			}
		}
		last := &j.Spec[len(j.Spec)-1]
		metrics := []model.Metric{{Name: "windows", Value: float64(len(j.Spec)), Unit: "count"}}
		if last.AcceptRate >= 0 {
			metrics = append(metrics, model.Metric{Name: "acceptance_last", Value: 100 * last.AcceptRate, Unit: "%"})
		}
		if last.MeanAcceptLen >= 0 {
			metrics = append(metrics, model.Metric{Name: "mean_accept_len_last", Value: last.MeanAcceptLen, Unit: "tokens"})
		}
		ev := []model.Evidence{model.LogEvidence(model.NoRank, j.Spec[0].Time, fmt.Sprintf("%s lines %d-%d", name, j.Spec[0].Line, last.Line))}
		if worst == nil {
			p.Report(model.Finding{Severity: model.SevInfo, Title: "Speculative decoding pays",
				Message: fmt.Sprintf("%s: %d metrics window(s): %s.", name, len(j.Spec), strings.Join(rates, "; ")), Metrics: metrics, Evidence: ev})
			continue
		}
		msg := fmt.Sprintf("%s: %d of %d window(s) below %.0f%% acceptance or %.2fx estimated speed-up (%s): %s.", name, len(bad), len(j.Spec), 100*minAcc, minSpeed,
			strings.Join(bad, ", "), strings.Join(rates, "; "))
		rec := "Use fewer speculative tokens, a proposer matched to the target (EAGLE/MTP), or disable speculation for this workload."
		var weakPos []string
		for i, r := range worst.PerPosition {
			if r < weak {
				weakPos = append(weakPos, fmt.Sprintf("%d (%.0f%%)", i+1, 100*r))
			}
		}
		if len(weakPos) > 0 {
			msg += fmt.Sprintf(" Draft positions %s are rarely accepted.", strings.Join(weakPos, ", "))
			rec = fmt.Sprintf("Lower num_speculative_tokens to %d: later positions are rarely accepted; then consider a better-matched proposer (EAGLE/MTP) or disabling speculation.",
				max(1, len(worst.PerPosition)-len(weakPos)))
		}
		if worstSpeed >= 0 {
			metrics = append(metrics, model.Metric{Name: "est_speedup_worst", Value: worstSpeed, Unit: "x"})
		}
		sev, title := model.SevWarning, "Low speculative-decoding acceptance"
		if worstSpeed >= minSpeed {
			// Low acceptance, yet each target step still emits enough
			// tokens to beat the draft cost: worth tuning, not a fault.
			sev, title = model.SevInfo, "Low speculative-decoding acceptance, speculation still pays"
		}
		p.Report(model.Finding{Severity: sev, Title: title, Message: msg, Recommendation: rec,
			Confidence: model.Estimated, Metrics: metrics, Evidence: ev})
	}
	if !looked {
		p.NotMeasurable("no speculative-decoding metrics lines in the input")
	}
	return nil
}

// speedup is L / (1 + k × cost); -1 when L or k is unknown.
func speedup(s *model.SpecDecodeStat, cost float64) float64 {
	if s.MeanAcceptLen < 0 || s.NumSpecTokens <= 0 {
		return -1
	}
	return s.MeanAcceptLen / (1 + float64(s.NumSpecTokens)*cost)
}

func window(s *model.SpecDecodeStat, speed float64) string {
	var parts []string
	if s.AcceptRate >= 0 {
		parts = append(parts, fmt.Sprintf("acceptance %.1f%%", 100*s.AcceptRate))
	}
	if s.MeanAcceptLen >= 0 {
		parts = append(parts, fmt.Sprintf("mean length %.2f", s.MeanAcceptLen))
	}
	if s.NumSpecTokens > 0 {
		parts = append(parts, fmt.Sprintf("k=%d", s.NumSpecTokens))
	}
	if speed >= 0 {
		parts = append(parts, fmt.Sprintf("≈%.2fx", speed))
	}
	return fmt.Sprintf("line %d %s", s.Line, strings.Join(parts, ", "))
}
