package joblog

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// reTGISpan finds the request span of a TGI router line and reTGIField its
// timing fields.
var (
	reTGISpan  = regexp.MustCompile(`(?:^|\s)(\w+)\{.*\btotal_time="`)
	reTGIField = regexp.MustCompile(`\b(total_time|validation_time|queue_time|inference_time|time_per_token)="([^"]*)"`)
	reDuration = regexp.MustCompile(`^([\d.]+)(s|ms|µs|us|ns)$`)
)

// tgiRequest reads text-generation-inference's per-request line (router/
// src/server.rs, 1.0-3.x): the handler's tracing span records the timings
// with Rust's Duration Debug format and the handler logs "Success":
//
//	2024-06-05T08:10:52.123456Z  INFO generate{parameters=GenerateParameters { … } total_time="2.07s"
//	  validation_time="370.3µs" queue_time="85.6µs" inference_time="2.07s" time_per_token="20.7ms"
//	  seed="None"}: text_generation_router::server: router/src/server.rs:322: Success
//
// (generate_stream and chat_completions spans carry the same fields). The
// level word after the timestamp is stripped as a decoration.
func (p *parser) tgiRequest(s string, d decor, n int) result {
	if !strings.Contains(s, `total_time="`) || !strings.Contains(s, "Success") {
		return unknown
	}
	m := reTGISpan.FindStringSubmatch(s)
	if m == nil {
		return unknown
	}
	r := model.RequestStat{Engine: "tgi", Route: m[1], Time: d.time, HasTime: d.hasTime, Line: n,
		Total: -1, Validation: -1, Queue: -1, Inference: -1, TimePerToken: -1}
	var bad []string
	for _, f := range reTGIField.FindAllStringSubmatch(s, -1) {
		v, ok := rustDuration(f[2])
		if !ok {
			bad = append(bad, f[1])
			continue
		}
		switch f[1] {
		case "total_time":
			r.Total = v
		case "validation_time":
			r.Validation = v
		case "queue_time":
			r.Queue = v
		case "inference_time":
			r.Inference = v
		case "time_per_token":
			r.TimePerToken = v
		}
	}
	if len(bad) > 0 || r.Total < 0 {
		p.warn(n, "TGI request line with unreadable timings (%s)", strings.Join(orMissing(bad), ", "))
		return known
	}
	p.requests.add(r)
	p.source("tgi")
	return known
}

// rustDuration parses Rust's Duration Debug form ("2.07s", "20.7ms",
// "370.3µs", "85ns") into seconds.
func rustDuration(v string) (float64, bool) {
	m := reDuration.FindStringSubmatch(v)
	if m == nil {
		return -1, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1, false
	}
	switch m[2] {
	case "ms":
		f /= 1e3
	case "µs", "us":
		f /= 1e6
	case "ns":
		f /= 1e9
	}
	return f, true
}
