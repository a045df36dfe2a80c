package diffreport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/compare/comparetest"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestRender(t *testing.T) {
	b, c := comparetest.RenderPair()
	res := compare.Compare(b, c, compare.Options{FailPct: 5})
	for _, f := range Formats {
		var buf bytes.Buffer
		if err := Render(&buf, res, f); err != nil {
			t.Fatal(err)
		}
		got := buf.Bytes()
		switch f {
		case "json":
			var v map[string]any
			if err := json.Unmarshal(got, &v); err != nil || v["schema"] != JSONSchema || v["regressed"] != true {
				t.Errorf("json: %v %v", err, v["schema"])
			}
		case "junit":
			var v struct {
				Failures int `xml:"failures,attr"`
			}
			if err := xml.Unmarshal(got, &v); err != nil || v.Failures != 3 {
				t.Errorf("junit: %v, %d failures", err, v.Failures)
			}
		}
		ext := map[string]string{"text": ".txt", "md": ".md", "json": ".json", "junit": ".xml"}[f]
		path := filepath.Join("testdata", "diff"+ext)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update):\n%s", f, path, got)
		}
		var again bytes.Buffer
		_ = Render(&again, compare.Compare(b, c, compare.Options{FailPct: 5}), f)
		if !bytes.Equal(got, again.Bytes()) {
			t.Errorf("%s: output differs between runs", f)
		}
	}
	if err := Render(&bytes.Buffer{}, res, "html"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestNotComparableWarning(t *testing.T) {
	b, _ := comparetest.BasePair()
	other := fixture.New("other.json", model.FormatNsys)
	th := other.Thread(1, "main")
	other.Kernel(0, 1, "ncclKernel", 0, 50, th, 0)
	res := compare.Compare(b, comparetest.Analyse(other.Build()), compare.Options{})
	if res.Comparable {
		t.Fatal("comparable")
	}
	var buf bytes.Buffer
	if err := Render(&buf, res, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "WARNING not comparable: ") {
		t.Errorf("text lacks the warning:\n%s", buf.String())
	}
}
