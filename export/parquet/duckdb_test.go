package parquet

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDuckDBReadsDataset opens a two-shard dataset with a real DuckDB (the
// Node.js client) through scripts/duckdb-check.mjs. It needs node and
// `npm install --prefix .cache/duckdb @duckdb/node-api` at the repository
// root; without them it skips, except under CI=true where it fails.
func TestDuckDBReadsDataset(t *testing.T) {
	node, err := exec.LookPath("node")
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	modules := os.Getenv("DUCKDB_NODE_MODULES")
	if modules == "" {
		modules = filepath.Join(root, ".cache", "duckdb", "node_modules")
	}
	_, modErr := os.Stat(filepath.Join(modules, "@duckdb", "node-api", "package.json"))
	if err != nil || modErr != nil {
		msg := "needs node and the DuckDB client: npm install --prefix .cache/duckdb @duckdb/node-api"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	rows := sampleRows(20)
	for shard, part := range [][]*Rows{rows[:8], rows[8:]} {
		w, err := NewWriter(dir, ShardSuffix(shard, 2), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range part {
			if err := w.Add(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, filepath.Join(root, "scripts", "duckdb-check.mjs"), dir)
	cmd.Env = append(os.Environ(), "DUCKDB_NODE_MODULES="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb-check: %v\n%s", err, stderr.String())
	}
	var res struct {
		Counts         map[string]int
		FindingsByRule []struct {
			Rule, Severity   string
			Findings, Inputs int
		} `json:"findings_by_rule"`
		Status []struct {
			Status string
			Inputs int
			Bytes  float64
		}
		TopKernels []struct {
			Kernel   string
			Launches float64
			Total_ns float64 `json:"total_ns"`
		} `json:"top_kernels"`
		WorstIdle []struct {
			Input, Device string
			Idle_pct      float64 `json:"idle_pct"`
		} `json:"worst_idle"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]int{"inputs": 20, "metrics": 32, "findings": 32, "kernels": 32}
	for k, v := range want {
		if res.Counts[k] != v {
			t.Errorf("DuckDB counts %s = %d, want %d", k, res.Counts[k], v)
		}
	}
	if len(res.FindingsByRule) != 2 || res.FindingsByRule[0].Rule != "kernel-gap" || res.FindingsByRule[0].Severity != "error" ||
		res.FindingsByRule[0].Findings != 16 || res.FindingsByRule[0].Inputs != 16 {
		t.Errorf("findings by rule = %+v", res.FindingsByRule)
	}
	if len(res.Status) != 2 || res.Status[0].Status != "error" || res.Status[0].Inputs != 4 || res.Status[1].Inputs != 16 {
		t.Errorf("status = %+v", res.Status)
	}
	if len(res.TopKernels) == 0 || res.TopKernels[0].Kernel != "gemm" || res.TopKernels[0].Launches != 48 || res.TopKernels[0].Total_ns != 4800 {
		t.Errorf("top kernels = %+v", res.TopKernels)
	}
	if len(res.WorstIdle) == 0 || res.WorstIdle[0].Input != "traces/job018/rank0.json" || res.WorstIdle[0].Idle_pct != 9 || res.WorstIdle[0].Device != "rank0/gpu0" {
		t.Errorf("worst idle = %+v", res.WorstIdle)
	}
}
