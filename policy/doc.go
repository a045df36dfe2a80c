// Package policy reads a tracedx policy file (YAML) and applies it: per-rule
// parameters, severities and disabled rules become a detectors.Config, and
// gate conditions are evaluated over the metrics of a model.Report.
//
// Place in the pipeline: cmd → policy → detectors, model. The package never
// runs detectors and never prints; the CLI maps failed gates to exit code 1
// and policy-file errors to exit code 2.
//
// Metrics: Metrics computes the stable, documented metric namespace (see
// docs/policy.md) from a report. Units are part of each metric name
// (_pct = percent 0..100, _ms = milliseconds, _gbps = GB/s, counts bare).
//
// Ownership: a *Policy is immutable after Load and safe for concurrent use.
package policy
