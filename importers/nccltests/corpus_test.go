package nccltests

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

var dumpDir = os.Getenv("NCCL_DUMP_DIR") // debugging aid: write each corpus dump here

// TestCorpus imports every corpus log: no error, no panic, Validate passes,
// and wherever a run prints "Avg bus bandwidth" the mean of its parsed busbw
// values (both halves, every row) equals it to the printed precision.
func TestCorpus(t *testing.T) {
	files := corpus.Files(t, "corpus/nccl", ".log")
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr, err := Parse(f, name, importers.Options{})
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if dumpDir != "" {
				var buf bytes.Buffer
				tr.Dump(&buf)
				os.WriteFile(filepath.Join(dumpDir, name+".dump"), buf.Bytes(), 0o644)
			}
			for i, r := range tr.Bench.Runs {
				checkAvg(t, i, r)
			}
		})
	}
}

// checkAvg compares the printed average with the mean of the printed busbw
// values. Each busbw is printed to 2 decimals, so the mean of the printed
// values may differ from nccl-tests' mean of the exact values by up to 0.005,
// plus half a unit of the average's own last printed digit.
func checkAvg(t *testing.T, i int, r model.BenchRun) {
	t.Helper()
	if r.ReportedAvgBusBW < 0 || r.Processes > 1 || len(r.Rows) == 0 || !r.TableHeader {
		return
	}
	sum, n := 0.0, 0
	for _, row := range r.Rows {
		for _, h := range []model.BenchResult{row.OutOfPlace, row.InPlace} {
			if h.Present {
				sum += h.BusBWGBps
				n++
			}
		}
	}
	mean := sum / float64(n)
	printed := strconv.FormatFloat(r.ReportedAvgBusBW, 'g', 6, 64)
	tol := 0.005 + halfUnit(printed)
	if math.Abs(mean-r.ReportedAvgBusBW) > tol {
		t.Errorf("run %d (%s, line %d): mean busbw %.6g over %d values != printed avg %s (tolerance %g)", i, r.Collective, r.Line, mean, n, printed, tol)
	}
}

func halfUnit(s string) float64 {
	if strings.ContainsAny(s, "eE") {
		return math.Inf(1)
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return 0.5 * math.Pow(10, -float64(len(s)-i-1))
	}
	return 0.5
}

// TestCorpusFacts pins what a few corpus logs must yield (see MANIFEST.tsv).
func TestCorpusFacts(t *testing.T) {
	dir := corpus.Dir(t, "corpus/nccl")
	type run struct {
		coll         string
		ranks, nodes int
		rows         int
		truncated    bool
	}
	want := map[string][]run{
		"h100x16-a3mega-2node-tcpxo-allreduce-mangled-header.log":                  {{"all_reduce", 16, 2, 31, false}},
		"gh-issue-a100x16-p4d-2node-efa-bandwidth-dip-64MB-info-line-in-table.log": {{"all_reduce", 16, 0, 6, false}},
		"h100x2-2node-alltoall-sendrecv-truncated-nt2.17.6.log":                    {{"alltoall", 2, 2, 10, false}, {"sendrecv", 2, 2, 0, true}},
		"b200x16-2node-sendrecv-wrapper-ncclversion-nccl2.29.7.log":                {{"sendrecv", 16, 2, 19, false}, {"sendrecv", 16, 2, 1, false}},
		"rtx2080tix2-pcie-nop2p-multicollective-shell-session.log": {{"all_reduce", 2, 1, 28, false}, {"all_gather", 2, 1, 28, false},
			{"broadcast", 2, 1, 28, false}, {"reduce", 2, 1, 28, false}, {"reduce", 1, 1, 28, false}, {"alltoall", 2, 1, 28, false}},
		"gh-issue-h100x8-singlenode-8GB-allreduce-bdf-format-excerpt.log": {{"all_reduce", 8, 1, 1, false}},
	}
	for name, runs := range want {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Parse(f, name, importers.Options{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Bench.Runs) != len(runs) {
			t.Errorf("%s: %d runs, want %d", name, len(tr.Bench.Runs), len(runs))
			continue
		}
		for i, w := range runs {
			r := tr.Bench.Runs[i]
			got := run{r.Collective, r.Ranks, r.Nodes, len(r.Rows), r.Truncated}
			if got != w {
				t.Errorf("%s run %d: got %+v, want %+v", name, i, got, w)
			}
		}
	}
	// NCCL facts of the EFA log.
	f, err := os.Open(filepath.Join(dir, "a100x16-p4d-2node-efa-ofi-allreduce-info-mpitag-nccl2.9.9.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Parse(f, "efa", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := tr.Bench.NCCL
	if n.Version != "2.9.9+cuda11.2" || n.Network != "AWS Libfabric" || n.OFIProvider != "efa" || n.InitComplete != 16 ||
		strings.Join(n.Transports, ",") != "NET/AWS Libfabric/GDRDMA,P2P/IPC/read" {
		t.Errorf("EFA facts: %+v", n)
	}
}
