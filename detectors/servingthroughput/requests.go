package servingthroughput

import (
	"fmt"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// requests reports per-request timing lines (TGI router): a latency
// summary (info) and, when requests spend at least queue_share of their
// time queued, a queue warning. It returns whether the log had any.
func requests(p *detectors.Pass, j *model.JobLog, name string) bool {
	rs := j.Requests
	if len(rs) == 0 {
		return false
	}
	var total, queue, tpot []float64
	sumTotal, sumQueue := 0.0, 0.0
	for _, r := range rs {
		total = append(total, r.Total)
		if r.Queue >= 0 {
			queue = append(queue, r.Queue)
			sumQueue += r.Queue
			sumTotal += r.Total
		}
		if r.TimePerToken > 0 {
			tpot = append(tpot, r.TimePerToken)
		}
	}
	first, last := rs[0], rs[len(rs)-1]
	where := fmt.Sprintf("%s %s lines %d-%d", name, first.Engine, first.Line, last.Line)
	ev := []model.Evidence{{Rank: model.NoRank, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Start: first.Time, End: last.Time, Note: where}}
	tq := quantiles(total, 0.5, 0.9)
	msg := fmt.Sprintf("%s: %d requests; latency %.3g s p50, %.3g s p90", where, len(rs), tq[0], tq[1])
	metrics := []model.Metric{{Name: "requests", Value: float64(len(rs)), Unit: "count"},
		{Name: "latency_p50", Value: tq[0], Unit: "s"}, {Name: "latency_p90", Value: tq[1], Unit: "s"}}
	share, queueP90 := 0.0, 0.0
	if len(queue) > 0 {
		qq := quantiles(queue, 0.5, 0.9)
		queueP90 = qq[1]
		share = detectors.Pct(sumQueue, sumTotal) / 100
		msg += fmt.Sprintf("; queued %.3g s p50, %.3g s p90 (%.0f%% of request time)", qq[0], qq[1], 100*share)
		metrics = append(metrics, model.Metric{Name: "queue_p50", Value: qq[0], Unit: "s"}, model.Metric{Name: "queue_p90", Value: qq[1], Unit: "s"},
			model.Metric{Name: "queue_share", Value: detectors.Round2(100 * share), Unit: "%"})
	}
	if len(tpot) > 0 {
		tp := quantiles(tpot, 0.5)[0]
		msg += fmt.Sprintf("; %.3g ms per output token p50 (%.0f tokens/s per request)", 1e3*tp, 1/tp)
		metrics = append(metrics, model.Metric{Name: "time_per_token_p50", Value: 1e3 * tp, Unit: "ms"})
	}
	p.Report(model.Finding{Severity: model.SevInfo, Title: "Request latency summary: " + first.Engine, Message: msg + ".", Metrics: metrics, Evidence: ev})
	if share >= p.Param("queue_share") {
		p.Report(model.Finding{
			Severity: model.SevWarning,
			Title:    "Requests queue: " + first.Engine,
			Message: fmt.Sprintf("%s: requests spend %.0f%% of their time queued before inference starts (p90 %.3g s): the server admits fewer requests than arrive.",
				where, 100*share, queueP90),
			Recommendation: "Admit more per batch (TGI max_batch_total_tokens, max_batch_prefill_tokens, max_concurrent_requests) when memory allows, or add replicas; a queue growing without bound means the load exceeds capacity.",
			Metrics:        []model.Metric{{Name: "queue_share", Value: detectors.Round2(100 * share), Unit: "%"}},
			Evidence:       ev,
		})
	}
	return true
}
