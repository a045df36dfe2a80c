package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAnalyzePolicy(t *testing.T) {
	needImporters(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "rank0.pt.trace.json")
	writeKinetoTrace(t, trace, 40, 30, false) // about 45% idle
	nccl := filepath.Join(dir, "allreduce.log")
	writeNCCLLog(t, nccl, 90)
	lenient := writePolicy(t, filepath.Join(dir, "lenient.yaml"), "gates:\n  - metric: gpu.idle_pct\n    max: 90\n")
	strict := writePolicy(t, filepath.Join(dir, "strict.yaml"), "rules:\n  kernel-gap:\n    severity: info\ngates:\n  - metric: gpu.idle_pct\n    max: 20\n  - metric: nccl.all_reduce.peak_busbw_gbps\n    min: 150\n")
	bad := writePolicy(t, filepath.Join(dir, "bad.yaml"), "rules:\n  kernel-gap:\n    parms: {}\n")
	badRule := writePolicy(t, filepath.Join(dir, "badrule.yaml"), "rules:\n  no-such-rule:\n    enabled: false\n")
	junitPath := filepath.Join(dir, "junit.xml")

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"pass", []string{"analyze", trace, "--policy", lenient}, 0, ""},
		{"gate fails", []string{"analyze", trace, "--policy", strict, "--junit", junitPath}, 1,
			"2 of 2 policy gates failed:\n  " + strict + ":5: gpu.idle_pct = "},
		{"not measurable", []string{"analyze", trace, "--policy", strict}, 1, "nccl.all_reduce.peak_busbw_gbps: not measurable on this input"},
		{"nccl gate", []string{"analyze", nccl, "--policy", strict}, 1, "nccl.all_reduce.peak_busbw_gbps = "},
		{"bad policy", []string{"analyze", trace, "--policy", bad}, 2, "bad.yaml:3: unknown key \"parms\""},
		{"bad rule", []string{"analyze", trace, "--policy", badRule}, 2, "badrule.yaml:2: unknown rule \"no-such-rule\""},
		{"missing policy", []string{"analyze", trace, "--policy", filepath.Join(dir, "none.yaml")}, 2, "none.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), tc.code, tc.stderr)
			}
		})
	}
	data, err := os.ReadFile(junitPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Suites) != 1 || doc.Failures != 2 {
		t.Errorf("junit: %d suites, %d failures:\n%s", len(doc.Suites), doc.Failures, data)
	}
}
