package export_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func exampleReport(t *testing.T) *model.Report {
	t.Helper()
	set := model.NewTraceSet([]*model.Trace{fixture.Example()})
	r := pipeline.AnalyzeSet(set, pipeline.Options{})
	r.ToolVersion = "test"
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test ./export -update and review the diff)\n--- got ---\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	r := exampleReport(t)
	for _, f := range []struct{ format, file string }{{"text", "example.txt"}, {"md", "example.md"}, {"json", "example.json"}} {
		var a, b bytes.Buffer
		if err := export.Render(&a, r, f.format); err != nil {
			t.Fatal(err)
		}
		if err := export.Render(&b, exampleReport(t), f.format); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renders of the same input differ", f.format)
		}
		golden(t, f.file, a.Bytes())
	}
}

// TestJSONContract checks the fields other tools rely on (schema_version "1").
func TestJSONContract(t *testing.T) {
	var buf bytes.Buffer
	if err := export.JSON(&buf, exampleReport(t)); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != "1" {
		t.Errorf("schema_version = %v", doc["schema_version"])
	}
	need := map[string][]string{
		"tool":           {"name", "version"},
		"inputs":         {"path", "format", "rank"},
		"devices":        {"rank", "device", "name", "span_ns", "busy_ns", "idle_ns", "compute_ns", "communication_ns", "memory_ns", "non_compute_ns"},
		"kernels":        {"name", "count", "total_ns"},
		"findings":       {"rule", "severity", "layer", "title", "message", "confidence", "metrics", "evidence"},
		"not_measurable": {"rule", "reason"},
	}
	for key, fields := range need {
		v, ok := doc[key]
		if !ok {
			t.Errorf("missing %s", key)
			continue
		}
		var obj map[string]any
		switch x := v.(type) {
		case map[string]any:
			obj = x
		case []any:
			if len(x) == 0 {
				if key != "not_measurable" {
					t.Errorf("%s is empty", key)
				}
				continue
			}
			obj = x[0].(map[string]any)
		}
		for _, f := range fields {
			if _, ok := obj[f]; !ok {
				t.Errorf("%s lacks %s", key, f)
			}
		}
	}
	ev := doc["findings"].([]any)[0].(map[string]any)["evidence"].([]any)[0].(map[string]any)
	for _, f := range []string{"rank", "device", "stream", "thread", "start_ns", "end_ns"} {
		if _, ok := ev[f]; !ok {
			t.Errorf("evidence lacks %s", f)
		}
	}
	// kernels[] is sorted by total_ns descending then name, and holds no memcpy.
	ks := doc["kernels"].([]any)
	for i := 1; i < len(ks); i++ {
		a, b := ks[i-1].(map[string]any), ks[i].(map[string]any)
		if a["total_ns"].(float64) < b["total_ns"].(float64) {
			t.Errorf("kernels not sorted at %d", i)
		}
	}
	for _, k := range ks {
		if strings.HasPrefix(k.(map[string]any)["name"].(string), "Memcpy") {
			t.Errorf("memcpy listed as a kernel")
		}
	}
}
