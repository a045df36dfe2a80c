package junit

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

var update = flag.Bool("update", false, "rewrite golden files")

func report() *model.Report {
	return &model.Report{
		Inputs: []model.Input{{Path: "run/rank0.json", Format: model.FormatKineto, Rank: 0}},
		Devices: []model.DeviceSummary{
			{Rank: 0, Device: 0, Span: 100e6, Busy: 60e6, Idle: 40e6, Compute: 50e6},
		},
		Findings: []model.Finding{
			{Rule: "kernel-gap", Severity: model.SevError, Title: "GPU idle between kernels", Message: "GPU 0 idle 40.0% of 100 ms\nmostly launch-bound",
				Metrics:  []model.Metric{{Name: "idle_pct", Value: 40, Unit: "%"}},
				Evidence: []model.Evidence{{Rank: 0, Device: 0, Stream: 7, Thread: -1, Start: 1000, End: 5000, Note: "largest gap <&>"}}},
			{Rule: "kernel-gap", Severity: model.SevInfo, Title: "gap totals", Message: "launch-bound 30 ms"},
			{Rule: "sync-api", Severity: model.SevWarning, Title: "host syncs", Message: "12 cudaDeviceSynchronize \x01 in steady state"},
		},
		NotMeasurable: []model.NotMeasurable{{Rule: "gil-stall", Reason: "no GIL intervals or OS runtime"}},
	}
}

func gates(t *testing.T) []policy.GateResult {
	p, err := policy.Parse("p.yaml", []byte("gates:\n  - metric: gpu.idle_pct\n    max: 20\n  - metric: findings.error\n    max: 5\n  - metric: nccl.all_reduce.peak_busbw_gbps\n    min: 100\n    optional: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p.Evaluate(report())
}

// Parse-back types: what a CI system reads.
type pSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Suites   []pSuite `xml:"testsuite"`
}

type pSuite struct {
	Name     string  `xml:"name,attr"`
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Props    []pProp `xml:"properties>property"`
	Cases    []pCase `xml:"testcase"`
}

type pProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type pCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

func TestWriteParseBack(t *testing.T) {
	s := FromReport("run/rank0.json", report(), gates(t), Options{FailOn: model.SevWarning, Rules: []string{"kernel-gap", "memcpy", "sync-api"}})
	var buf bytes.Buffer
	if err := Write(&buf, []Suite{s, ErrorSuite("bad.json", "bad.json: byte 0: unrecognised input format\nmore")}); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.xml")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, buf.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("output differs from %s (run with -update):\n%s", golden, buf.String())
	}

	var doc pSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("parse back: %v", err)
	}
	if doc.Tests != 8 || doc.Failures != 3 || doc.Errors != 1 || doc.Skipped != 2 {
		t.Errorf("totals tests=%d failures=%d errors=%d skipped=%d", doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites", len(doc.Suites))
	}
	s0 := doc.Suites[0]
	if s0.Name != "run/rank0.json" || s0.Tests != 7 || s0.Failures != 3 || s0.Skipped != 2 || s0.Errors != 0 {
		t.Errorf("suite 0 = %+v", s0)
	}
	if len(s0.Props) != 2 || s0.Props[0] != (pProp{"format", "kineto"}) {
		t.Errorf("properties = %+v", s0.Props)
	}
	cases := map[string]pCase{}
	for _, c := range s0.Cases {
		cases[c.Name] = c
	}
	kg := cases["kernel-gap"]
	if kg.Failure == nil || kg.Failure.Type != "error" || kg.Failure.Message != "error: GPU 0 idle 40.0% of 100 ms" ||
		!strings.Contains(kg.Failure.Text, "evidence rank 0 device 0 stream 7 thread -1 [1000, 5000) ns: largest gap <&>") ||
		!strings.Contains(kg.SystemOut, "launch-bound 30 ms") {
		t.Errorf("kernel-gap case = %+v", kg)
	}
	if c := cases["sync-api"]; c.Failure == nil || !strings.Contains(c.Failure.Text, "\uFFFD in steady state") {
		t.Errorf("sync-api case = %+v", c)
	}
	if c := cases["gil-stall"]; c.Skipped == nil || !strings.Contains(c.Skipped.Message, "not measurable: no GIL") {
		t.Errorf("gil-stall case = %+v", c)
	}
	if c := cases["memcpy"]; c.Failure != nil || c.Skipped != nil || c.Classname != RuleClass {
		t.Errorf("memcpy case = %+v", c)
	}
	if c := cases["gpu.idle_pct <= 20"]; c.Classname != GateClass || c.Failure == nil || !strings.Contains(c.Failure.Message, "above the limit 20") {
		t.Errorf("idle gate case = %+v", c)
	}
	if c := cases["findings.error <= 5"]; c.Failure != nil || !strings.Contains(c.SystemOut, "within") {
		t.Errorf("findings gate case = %+v", c)
	}
	if c := cases["nccl.all_reduce.peak_busbw_gbps >= 100"]; c.Skipped == nil {
		t.Errorf("optional gate case = %+v", c)
	}
	if e := doc.Suites[1].Cases[0].Error; e == nil || e.Message != "bad.json: byte 0: unrecognised input format" {
		t.Errorf("error suite = %+v", doc.Suites[1])
	}
}

func TestFailOnNever(t *testing.T) {
	s := FromReport("x", report(), nil, Options{FailOn: Never})
	for _, c := range s.Cases {
		if c.Failure != nil {
			t.Errorf("case %s failed with FailOn=Never", c.Name)
		}
	}
	s = FromReport("x", report(), nil, Options{FailOn: model.SevError})
	failed := 0
	for _, c := range s.Cases {
		if c.Failure != nil {
			failed++
		}
	}
	if failed != 1 {
		t.Errorf("%d failures with FailOn=error, want 1", failed)
	}
}

func TestCDATAEnd(t *testing.T) {
	r := &model.Report{Findings: []model.Finding{{Rule: "x", Severity: model.SevError, Title: "t", Message: "a ]]> b"}}}
	var buf bytes.Buffer
	if err := Write(&buf, []Suite{FromReport("s", r, nil, Options{FailOn: model.SevError})}); err != nil {
		t.Fatal(err)
	}
	var doc pSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if f := doc.Suites[0].Cases[0].Failure; f == nil || !strings.Contains(f.Text, "a ]]> b") {
		t.Errorf("failure text lost: %s", buf.String())
	}
}
