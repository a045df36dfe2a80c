package archtest

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/tracedx/tracedx/"

// Layers (docs/architecture.md):
//
//	cmd/tracedx → internal/pipeline, internal/batch → {importers, detectors, compare, policy, export} → model
//
// A rule forbids the packages matched by From to depend, directly or
// through others, on the packages matched by To. Patterns are module-relative
// paths; "p/..." matches p and everything below it.
var rules = []struct {
	From, To []string
	Why      string
	Except   []string // packages of From the rule does not apply to
}{
	{[]string{"model"}, []string{"..."}, "model is the leaf every layer shares", nil},
	{[]string{"importers/..."}, []string{"detectors/...", "export/...", "compare/...", "policy/...", "internal/pipeline", "internal/batch", "cmd/..."},
		"importers turn files into the model and know nothing of analysis or output", nil},
	{[]string{"detectors/..."}, []string{"importers/...", "export/...", "compare/...", "policy/...", "internal/pipeline", "internal/batch", "cmd/..."},
		"detectors read the model only: a rule never depends on a file format or an output", nil},
	{[]string{"export/..."}, []string{"detectors/...", "importers/...", "policy/...", "internal/pipeline", "internal/batch", "cmd/..."},
		"renderers format a model.Report / model.TraceSet / compare.Result; they compute nothing", nil},
	{[]string{"compare"}, []string{"detectors/...", "importers/...", "export/...", "policy/...", "internal/pipeline", "internal/batch", "cmd/..."},
		"compare reads two reports; rendering is export/diffreport's", nil},
	{[]string{"policy/..."}, []string{"importers/...", "export/...", "compare/...", "internal/pipeline", "internal/batch", "cmd/..."},
		"policy configures detectors and evaluates gates over a report", nil},
	{[]string{"internal/pipeline", "internal/batch"}, []string{"cmd/..."}, "only cmd wires the command line", nil},
	{[]string{"internal/tracejson", "internal/version", "internal/outfile"}, []string{"..."}, "leaf helpers", nil},
	// Test support (generators, fixtures, the corpus) never ships in the binary.
	{[]string{"cmd/...", "importers/...", "detectors/...", "export/...", "compare", "policy/...", "internal/pipeline", "internal/batch"},
		testSupport,
		"test support is imported by tests only", testSupport},
}

// testSupport are the generators, fixtures and corpus helpers of tests.
var testSupport = []string{"internal/fixture", "internal/kinetogen", "internal/nsysgen", "internal/corpus",
	"compare/comparetest", "detectors/internal/e2e", "detectors/internal/detectortest", "export/parquet/parquettest"}

// knownViolations are arrows that run backwards today and are being
// removed; an entry that no longer occurs fails the test, so the list can
// only shrink. Key: "from -> to".
var knownViolations = map[string]string{}

func match(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if match(p, pkg) {
			return true
		}
	}
	return false
}

// deps returns every package of the module with its module dependencies
// (transitive, non-test), all as module-relative paths.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	touchSources(t)
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "github.com/tracedx/tracedx/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	m := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], module) {
			continue
		}
		pkg := strings.TrimPrefix(f[0], module)
		m[pkg] = []string{}
		for _, d := range f[1:] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				m[pkg] = append(m[pkg], rel)
			}
		}
	}
	return m
}

// touchSources stats every Go file of the module, so that go test's result
// cache (which only sees files the test itself opens, not those go list
// reads) is invalidated when an import changes.
func touchSources(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportDirection(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	all := deps(t)
	if len(all) < 10 {
		t.Fatalf("go list found %d packages", len(all))
	}
	pkgs := make([]string, 0, len(all))
	for p := range all {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	seen := map[string]bool{}
	for _, pkg := range pkgs {
		for _, r := range rules {
			if !matchAny(r.From, pkg) {
				continue
			}
			if matchAny(r.Except, pkg) {
				continue
			}
			for _, d := range all[pkg] {
				if !matchAny(r.To, d) {
					continue
				}
				key := pkg + " -> " + d
				if _, ok := knownViolations[key]; ok {
					seen[key] = true
					continue
				}
				t.Errorf("%s depends on %s: %s", pkg, d, r.Why)
			}
		}
	}
	for k := range knownViolations {
		if !seen[k] {
			t.Errorf("known violation %q no longer occurs: delete it from knownViolations", k)
		}
	}
}
