// Package compare says what changed between two analyses of the same job —
// a base (yesterday's run, the main branch) and a candidate (today's run, a
// pull request) — and whether the candidate regressed. It is what
// `tracedx diff BASE CANDIDATE` prints.
//
// Place in the pipeline: pipeline (import + detectors) → two model.Reports
// (and optionally their TraceSets, for step durations) → Compare → Result,
// which export/diffreport renders (text, md, json, junit). It reads reports;
// it never re-runs detectors, touches importers or formats output.
//
// What is compared:
//   - headline quantities: span (longest device span), total GPU busy time,
//     total idle time, total kernel-gap time (kernel-gap findings' gap_total_ns
//     metrics) and step time (the p50 step time of the report's step model,
//     Report.StepPhases: decode steps first, then prefill, mixed; without
//     engine steps in the reports, the median ProfilerStep / step range
//     duration of the set);
//   - per-kernel time (name, count, total, delta, percent);
//   - per-device class times (compute, communication, memory, idle);
//   - findings new in the candidate and resolved since the base, matched by
//     rule and title with numbers masked (titles carry measured numbers),
//     and matched findings whose severity changed;
//   - a comparability check: the same number of inputs and devices with the
//     same device names, and kernel-name overlap (Jaccard index) at or above
//     Options.MinOverlap; otherwise the result is marked "not comparable".
//
// The regression gate (Options.FailPct) fails when span, step time or GPU
// busy time grew by more than that percentage.
//
// Units: durations are int64 nanoseconds; percentages are relative to the
// base. Output is deterministic: rows are sorted and floats formatted with
// fixed precision.
package compare
