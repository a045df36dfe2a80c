package pipeline

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// quantile7 is the test's own linear-interpolation quantile (numpy /
// pandas default, DuckDB quantile_cont), written independently of
// model.Quantile.
func quantile7(sorted []int64, p float64) float64 {
	pos := p * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return float64(sorted[len(sorted)-1])
	}
	frac := pos - float64(i)
	return float64(sorted[i])*(1-frac) + float64(sorted[i+1])*frac
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.0015+1e-9*math.Abs(b) }

type oracleStat struct {
	count, total, min, max int64
	avg                    float64
	durs                   []int64
}

func openRO(t *testing.T, f string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: f}).EscapedPath()+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func hasTable(t *testing.T, db *sql.DB, name string) bool {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// groupSQL runs q (name, duration rows) and aggregates, plus an SQL GROUP BY
// for count/sum/min/max/avg.
func groupSQL(t *testing.T, db *sql.DB, inner string) map[string]*oracleStat {
	t.Helper()
	out := map[string]*oracleStat{}
	rows, err := db.Query(`SELECT name, count(*), sum(d), min(d), max(d), avg(d) FROM (` + inner + `) GROUP BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		s := &oracleStat{}
		if err := rows.Scan(&name, &s.count, &s.total, &s.min, &s.max, &s.avg); err != nil {
			t.Fatal(err)
		}
		out[name] = s
	}
	rows.Close()
	rows, err = db.Query(`SELECT name, d FROM (` + inner + `) ORDER BY name, d`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var d int64
		if err := rows.Scan(&name, &d); err != nil {
			t.Fatal(err)
		}
		out[name].durs = append(out[name].durs, d)
	}
	rows.Close()
	return out
}

type jsonStats struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Count    int64    `json:"count"`
	TotalNs  int64    `json:"total_ns"`
	AvgNs    *float64 `json:"avg_ns"`
	MedianNs *float64 `json:"median_ns"`
	P90Ns    *float64 `json:"p90_ns"`
	MinNs    int64    `json:"min_ns"`
	MaxNs    int64    `json:"max_ns"`
	StddevNs *float64 `json:"stddev_ns"`
}

func reportJSON(t *testing.T, r *model.Report) (doc struct {
	Kernels []jsonStats `json:"kernels"`
	Ranges  []jsonStats `json:"ranges"`
	API     []jsonStats `json:"api"`
}) {
	t.Helper()
	var buf bytes.Buffer
	if err := export.JSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func checkStat(t *testing.T, what string, got jsonStats, w *oracleStat, p90 bool) {
	t.Helper()
	if got.Count != w.count || got.TotalNs != w.total || got.MinNs != w.min || got.MaxNs != w.max {
		t.Errorf("%s %.60q: report count %d total %d min %d max %d; SQL %d %d %d %d", what, got.Name, got.Count, got.TotalNs, got.MinNs, got.MaxNs, w.count, w.total, w.min, w.max)
		return
	}
	if got.AvgNs == nil || !near(*got.AvgNs, w.avg) {
		t.Errorf("%s %.60q: avg %v, SQL %v", what, got.Name, got.AvgNs, w.avg)
	}
	if got.MedianNs == nil || !near(*got.MedianNs, quantile7(w.durs, 0.5)) {
		t.Errorf("%s %.60q: median %v, oracle %v", what, got.Name, got.MedianNs, quantile7(w.durs, 0.5))
	}
	if p90 && (got.P90Ns == nil || !near(*got.P90Ns, quantile7(w.durs, 0.9))) {
		t.Errorf("%s %.60q: p90 %v, oracle %v", what, got.Name, got.P90Ns, quantile7(w.durs, 0.9))
	}
}

// TestNsysSummaryOracle checks kernels[] statistics (count, total, avg,
// median, p90, min, max) and ranges[] of NVTX push/pop and start/end ranges
// against SQL over each corpus export, the percentiles computed by the test.
func TestNsysSummaryOracle(t *testing.T) {
	for _, f := range corpus.Files(t, "corpus/nsys", ".sqlite") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			db := openRO(t, f)
			defer db.Close()
			r, err := Analyze(context.Background(), []string{f}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			doc := reportJSON(t, r)
			if hasTable(t, db, "CUPTI_ACTIVITY_KIND_KERNEL") {
				want := groupSQL(t, db, `SELECT s.value AS name, k."end" - k.start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName`)
				seen := 0
				for _, k := range doc.Kernels {
					if w, ok := want[k.Name]; ok {
						seen++
						checkStat(t, "kernel", k, w, true)
					}
				}
				if seen != len(want) {
					t.Errorf("%d of %d SQL kernel names in the report", seen, len(want))
				}
			}
			if hasTable(t, db, "NVTX_EVENTS") {
				// Closed push/pop and start/end ranges; the importer closes
				// unterminated ones at the trace end, so names with any are skipped.
				name := `COALESCE(n.text, (SELECT value FROM StringIds WHERE id = n.textId))`
				cols := map[string]bool{}
				rows, err := db.Query(`PRAGMA table_info(NVTX_EVENTS)`)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var cid, notnull, pk int
					var cname, ctype string
					var dflt any
					if err := rows.Scan(&cid, &cname, &ctype, &notnull, &dflt, &pk); err != nil {
						t.Fatal(err)
					}
					cols[cname] = true
				}
				rows.Close()
				if !cols["textId"] {
					name = `n.text`
				}
				want := groupSQL(t, db, `SELECT `+name+` AS name, n."end" - n.start AS d FROM NVTX_EVENTS n WHERE n.eventType IN (59, 60) AND n."end" IS NOT NULL AND `+name+` IS NOT NULL`)
				open := map[string]bool{}
				rows, err = db.Query(`SELECT ` + name + ` FROM NVTX_EVENTS n WHERE n.eventType IN (59, 60) AND n."end" IS NULL`)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var s sql.NullString
					_ = rows.Scan(&s)
					open[s.String] = true
				}
				rows.Close()
				// One row per (domain, name) in the report: merge domains.
				got := map[string][]jsonStats{}
				for _, g := range doc.Ranges {
					if g.Kind == "nvtx" {
						got[g.Name] = append(got[g.Name], g)
					}
				}
				checked := 0
				for n, w := range want {
					if open[n] {
						continue
					}
					gs := got[n]
					if len(gs) != 1 {
						// Several domains share the name: compare the sums.
						var c, tot int64
						for _, g := range gs {
							c += g.Count
							tot += g.TotalNs
						}
						if c != w.count || tot != w.total {
							t.Errorf("range %.60q: report count %d total %d over %d domains; SQL %d %d", n, c, tot, len(gs), w.count, w.total)
						}
						continue
					}
					checked++
					checkStat(t, "range", gs[0], w, false)
				}
				t.Logf("%d NVTX range names checked against SQL", checked)
			}
		})
	}
}

// TestKinetoSummarySecondPass recomputes kernels[], ranges[] and api[]
// statistics of Kineto corpus traces with a second, independent pass over the
// imported model and compares them with the JSON report.
func TestKinetoSummarySecondPass(t *testing.T) {
	files := corpus.Files(t, "corpus/kineto", ".json.gz", ".json")
	if testing.Short() && len(files) > 4 {
		files = files[:4]
	}
	for _, f := range files {
		if strings.Contains(f, "param-dlrm-w8-rank") && !strings.HasSuffix(f, "rank0.pt.trace.json.gz") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			set, err := Load(context.Background(), []string{f}, Options{Import: importers.Options{}})
			if err != nil {
				t.Fatal(err)
			}
			tr := set.Traces[0]
			kern := map[string]*oracleStat{}
			add := func(m map[string]*oracleStat, name string, d int64) {
				s := m[name]
				if s == nil {
					s = &oracleStat{min: d, max: d}
					m[name] = s
				}
				s.count++
				s.total += d
				s.min, s.max = min(s.min, d), max(s.max, d)
				s.durs = append(s.durs, d)
			}
			for _, k := range tr.Kernels {
				add(kern, tr.Str(k.Name), int64(k.End-k.Start))
			}
			rng := map[string]*oracleStat{}
			for _, g := range tr.Ranges {
				if g.Kind == model.RangeUser || g.Kind == model.RangeNVTX || g.Kind == model.RangeStep {
					add(rng, tr.Str(tr.RangeTrack(&g).Domain)+"\x00"+tr.Str(g.Name), int64(g.End-g.Start))
				}
			}
			api := map[string]*oracleStat{}
			for _, c := range tr.APICalls {
				add(api, tr.Str(tr.CallName(&c)), int64(c.End-c.Start))
			}
			for _, m := range []map[string]*oracleStat{kern, rng, api} {
				for _, s := range m {
					sort.Slice(s.durs, func(i, j int) bool { return s.durs[i] < s.durs[j] })
					s.avg = float64(s.total) / float64(s.count)
				}
			}
			doc := reportJSON(t, AnalyzeSet(set, Options{}))
			if len(doc.Kernels) != len(kern) || len(doc.API) != len(api) {
				t.Errorf("report: %d kernel names, %d API names; second pass: %d, %d", len(doc.Kernels), len(doc.API), len(kern), len(api))
			}
			for _, k := range doc.Kernels {
				if w := kern[k.Name]; w != nil {
					checkStat(t, "kernel", k, w, true)
				}
			}
			for _, a := range doc.API {
				if w := api[a.Name]; w != nil {
					a.MinNs = w.min // api[] has no min_ns
					checkStat(t, "api", a, w, false)
				}
			}
			if len(doc.Ranges) != len(rng) {
				t.Errorf("report: %d range groups; second pass %d", len(doc.Ranges), len(rng))
			}
		})
	}
}
