package export

import (
	"strings"

	"github.com/tracedx/tracedx/model"
)

// The serving summary: one row per inference-engine instance, taken from
// the serving-throughput rule's "Serving summary" findings (their metrics
// are the numbers; the rule computes them once from the engine log). The
// memory-pressure and spec-decode numbers it carries (preemptions, OOMs,
// acceptance) are counted by that rule from the same log.

const (
	servingRule   = "serving-throughput"
	servingPrefix = "Serving summary: "
)

// servingCols are the summary's columns: header, metric name, format.
var servingCols = []struct{ head, metric, unit string }{
	{"gen p50 tok/s", "gen_tps_p50", ""}, {"gen p90 tok/s", "gen_tps_p90", ""}, {"gen peak", "gen_tps_peak", ""},
	{"prompt p50 tok/s", "prompt_tps_p50", ""}, {"running max", "running_max", "n"}, {"waiting max", "waiting_max", "n"},
	{"KV p50", "kv_usage_p50", "%"}, {"KV max", "kv_usage_max", "%"}, {"preemptions", "preemptions", "n"},
	{"OOMs", "ooms", "n"}, {"spec accept", "spec_acceptance", "%"},
}

// servingFindings returns the serving summaries of r, in report order.
func servingFindings(r *model.Report) []*model.Finding {
	var out []*model.Finding
	for i := range r.Findings {
		f := &r.Findings[i]
		if f.Rule == servingRule && strings.HasPrefix(f.Title, servingPrefix) {
			out = append(out, f)
		}
	}
	return out
}

// servingInput is the input file a summary is about (its evidence note
// starts with the file name).
func servingInput(f *model.Finding) string {
	if len(f.Evidence) == 0 {
		return ""
	}
	if fs := strings.Fields(f.Evidence[0].Note); len(fs) > 0 {
		return fs[0]
	}
	return ""
}

// servingTables returns the serving summary table (none without engine
// stats): throughput p50/p90, requests running / waiting, KV usage,
// preemptions, OOMs and speculative acceptance per engine.
func servingTables(r *model.Report) []sumTable {
	fs := servingFindings(r)
	if len(fs) == 0 {
		return nil
	}
	t := sumTable{id: "serving", title: "Serving summary (engine logs)",
		note: "Steady-state generation and prompt throughput, queue and KV cache use per engine instance (serving-throughput rule); - = not printed by the engine."}
	for _, c := range servingCols {
		t.head = append(t.head, c.head)
	}
	t.head = append(t.head, "input", "engine")
	for _, f := range fs {
		var row []cell
		for _, c := range servingCols {
			m, ok := f.Metric(c.metric)
			switch {
			case !ok:
				row = append(row, cell{s: "-"})
			case c.unit == "%":
				row = append(row, plain("%.1f%%", m.Value))
			case c.unit == "n":
				row = append(row, plain("%.0f", m.Value))
			default:
				row = append(row, plain("%.1f", m.Value))
			}
		}
		row = append(row, plain("%s", servingInput(f)), nameCell(strings.TrimPrefix(f.Title, servingPrefix)))
		t.rows = append(t.rows, row)
	}
	return []sumTable{t}
}

// jsonServing is one engine's serving summary in the JSON report; numbers
// the engine did not print are null.
type jsonServing struct {
	Input         string   `json:"input"`
	Engine        string   `json:"engine"`
	GenTPSP50     *float64 `json:"gen_tps_p50"`
	GenTPSP90     *float64 `json:"gen_tps_p90"`
	GenTPSPeak    *float64 `json:"gen_tps_peak"`
	PromptTPSP50  *float64 `json:"prompt_tps_p50"`
	RunningMax    *float64 `json:"running_max"`
	WaitingMax    *float64 `json:"waiting_max"`
	KVUsageP50Pct *float64 `json:"kv_usage_p50_pct"`
	KVUsageMaxPct *float64 `json:"kv_usage_max_pct"`
	Preemptions   *float64 `json:"preemptions"`
	OOMs          *float64 `json:"ooms"`
	SpecAcceptPct *float64 `json:"spec_acceptance_pct"`
}

// servingJSON returns the serving summaries for the JSON report.
func servingJSON(r *model.Report) []jsonServing {
	var out []jsonServing
	for _, f := range servingFindings(r) {
		get := func(name string) *float64 {
			if m, ok := f.Metric(name); ok {
				v := round(m.Value, 3)
				return &v
			}
			return nil
		}
		out = append(out, jsonServing{Input: servingInput(f), Engine: strings.TrimPrefix(f.Title, servingPrefix),
			GenTPSP50: get("gen_tps_p50"), GenTPSP90: get("gen_tps_p90"), GenTPSPeak: get("gen_tps_peak"), PromptTPSP50: get("prompt_tps_p50"),
			RunningMax: get("running_max"), WaitingMax: get("waiting_max"), KVUsageP50Pct: get("kv_usage_p50"), KVUsageMaxPct: get("kv_usage_max"),
			Preemptions: get("preemptions"), OOMs: get("ooms"), SpecAcceptPct: get("spec_acceptance")})
	}
	return out
}
