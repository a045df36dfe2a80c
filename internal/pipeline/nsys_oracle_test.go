package pipeline

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the SQL oracle reads the exports itself

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/corpus"
)

// TestNsysKernelsOracle checks the JSON report's kernels[] of every Nsight
// Systems export in the corpus against an SQL GROUP BY over the demangled
// name that the test runs itself, independently of the importer.
func TestNsysKernelsOracle(t *testing.T) {
	for _, f := range corpus.Files(t, "corpus/nsys", ".sqlite") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			type stat struct{ count, total int64 }
			want := map[string]stat{}
			db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: f}).EscapedPath()+"?mode=ro&immutable=1")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type='table' AND name='CUPTI_ACTIVITY_KIND_KERNEL'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				rows, err := db.Query(`SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k
					JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value`)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var name string
					var s stat
					if err := rows.Scan(&name, &s.count, &s.total); err != nil {
						t.Fatal(err)
					}
					want[name] = s
				}
				rows.Close()
			}

			r, err := Analyze(context.Background(), []string{f}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := export.JSON(&buf, r); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Kernels []struct {
					Name    string `json:"name"`
					Count   int64  `json:"count"`
					TotalNs int64  `json:"total_ns"`
				} `json:"kernels"`
				NotMeasurable []struct {
					Rule string `json:"rule"`
				} `json:"not_measurable"`
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			got := map[string]stat{}
			for _, k := range doc.Kernels {
				if strings.HasPrefix(k.Name, "[CUDA graph ") {
					continue // whole-graph launches (GRAPH_TRACE), not KERNEL rows
				}
				got[k.Name] = stat{k.Count, k.TotalNs}
			}
			if len(got) != len(want) {
				t.Errorf("kernels[] has %d names, SQL says %d", len(got), len(want))
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("kernel %.80q: report %+v, SQL %+v", name, got[name], w)
				}
			}
			if len(want) == 0 && len(doc.Kernels) == 0 {
				found := false
				for _, nm := range doc.NotMeasurable {
					found = found || nm.Rule == "kernel-gap"
				}
				if !found {
					t.Errorf("an export without kernels must report kernel-gap as not measurable")
				}
			}
		})
	}
}
