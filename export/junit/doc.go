// Package junit renders tracedx results as JUnit XML for CI systems
// (Jenkins, GitLab, GitHub Actions test reporters).
//
// Place in the pipeline: cmd → export/junit → model. It never
// computes findings: it maps a report (and optionally the policy's gate
// results, model.GateResult) onto test cases: one test suite per input, one test case per
// rule and one per gate condition. Findings at or above the fail-on
// severity are failures; rules that could not measure the input are skipped
// test cases; an input that could not be read is a suite with one errored
// case. Times are not recorded (time="0") so that output is byte-identical
// for the same input.
package junit
