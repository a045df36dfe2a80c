package servingthroughput

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
)

// tgi writes TGI router "Success" lines (router/src/server.rs span fields),
// one per (total, queue) pair in seconds.
func tgi(rows ...[2]float64) string {
	var b strings.Builder
	for i, r := range rows {
		fmt.Fprintf(&b, "2024-06-05T08:10:%02d.000000Z  INFO generate{parameters=GenerateParameters { best_of: None, max_new_tokens: Some(100) } total_time=\"%gs\" validation_time=\"370.3µs\" queue_time=\"%gs\" inference_time=\"%gs\" time_per_token=\"20.7ms\" seed=\"None\"}: text_generation_router::server: router/src/server.rs:322: Success\n",
			i, r[0], r[1], r[0]-r[1])
	}
	return b.String()
}

func TestTGIQueuePlanted(t *testing.T) {
	res := analyseLog(t, tgi([2]float64{2.1, 0.0001}, [2]float64{3.5, 1.4}, [2]float64{5, 2.9}, [2]float64{6.3, 4.2}, [2]float64{7.7, 5.6}), nil)
	got := titles(res)
	if got != "Requests queue: tgi | Request latency summary: tgi" {
		t.Fatalf("findings: %s", got)
	}
	if m, _ := res.Findings[0].Metric("queue_share"); m.Value < 50 || m.Value > 60 {
		t.Errorf("queue share %v", m.Value)
	}
	if !strings.Contains(res.Findings[1].Message, "20.7 ms per output token") {
		t.Errorf("summary: %s", res.Findings[1].Message)
	}
}

func TestTGIClean(t *testing.T) {
	res := analyseLog(t, tgi([2]float64{2.1, 0.0001}, [2]float64{2.0, 0.002}, [2]float64{2.2, 0.01}), nil)
	if got := titles(res); got != "Request latency summary: tgi" || len(res.NotMeasurable) != 0 {
		t.Fatalf("findings: %s, not measurable %v", got, res.NotMeasurable)
	}
}

func titles(res detectors.Result) string {
	var s []string
	for _, f := range res.Findings {
		s = append(s, f.Title)
	}
	return strings.Join(s, " | ")
}
