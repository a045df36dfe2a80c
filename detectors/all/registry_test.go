package all

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/corpus"
)

func TestRegistry(t *testing.T) {
	list := Detectors()
	if err := validate(list); err != nil {
		t.Fatal(err)
	}
	for _, d := range list {
		if !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(d.ID) {
			t.Errorf("%s: IDs are lower-case words joined by dashes", d.ID)
		}
		if got, ok := ByID(d.ID); !ok || got != d {
			t.Errorf("ByID(%s) does not return the detector", d.ID)
		}
	}
}

var (
	plantedTest = regexp.MustCompile(`func (Test\w*(Planted|Fault|Flag|Finds)\w*)\(`)
	cleanTest   = regexp.MustCompile(`func (Test\w*(Clean|Quiet|Healthy)\w*)\(`)
)

// TestEveryDetectorHasFixtures checks that each detector's package has a
// test with a planted fault and a test with a clean fixture.
func TestEveryDetectorHasFixtures(t *testing.T) {
	root := corpus.Root()
	for _, d := range Detectors() {
		fn := runtime.FuncForPC(reflect.ValueOf(d.Run).Pointer()).Name()
		// e.g. github.com/tracedx/tracedx/detectors/kernelgap.run
		pkg := fn[:strings.LastIndex(fn, ".")]
		if i := strings.LastIndex(pkg, "/"); i >= 0 {
			if j := strings.Index(pkg[i:], "."); j >= 0 {
				pkg = pkg[:i+j]
			}
		}
		rel := strings.TrimPrefix(pkg, "github.com/tracedx/tracedx/")
		dir := filepath.Join(root, filepath.FromSlash(rel))
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		var planted, clean bool
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			planted = planted || plantedTest.Match(b)
			clean = clean || cleanTest.Match(b)
		}
		if !planted {
			t.Errorf("%s (%s): no planted-fault test (func Test...Planted/Fault/Flag/Finds...)", d.ID, rel)
		}
		if !clean {
			t.Errorf("%s (%s): no clean-fixture test (func Test...Clean/Quiet/Healthy...)", d.ID, rel)
		}
	}
}

// validate checks a detector list: unique non-empty IDs, titles, layers,
// docs with a "How to fix" section, a run function and documented params.
func validate(list []*detectors.Detector) error {
	seen := map[string]bool{}
	var problems []string
	for _, d := range list {
		switch {
		case d.ID == "":
			problems = append(problems, "a detector has no ID")
			continue
		case seen[d.ID]:
			problems = append(problems, "duplicate ID "+d.ID)
		}
		seen[d.ID] = true
		if d.Title == "" {
			problems = append(problems, d.ID+": no title")
		}
		if d.Layer == "" {
			problems = append(problems, d.ID+": no layer")
		}
		if d.Run == nil {
			problems = append(problems, d.ID+": no run function")
		}
		if !strings.Contains(d.Doc, "How to fix") {
			problems = append(problems, d.ID+": docs lack a \"How to fix\" section")
		}
		ps := map[string]bool{}
		for _, p := range d.Params {
			if p.Name == "" || p.Doc == "" || ps[p.Name] {
				problems = append(problems, d.ID+": parameter "+p.Name+" is unnamed, undocumented or duplicated")
			}
			ps[p.Name] = true
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("detector registry: %s", strings.Join(problems, "; "))
	}
	return nil
}
