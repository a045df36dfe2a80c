package nccltests_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/all"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// ncclOnly are the corpus excerpts that hold NCCL_DEBUG lines only (no
// nccl-tests header, table or summary anywhere): by content they are a job
// log, and the registry gives them to the joblog importer.
var ncclOnly = map[string]bool{
	"gh-issue-a100x2-2node-ib-gdrdma-info-proxy-lines-large-size-dropoff-excerpt.log":  true,
	"gh-issue-dgxh100-2node-info-tree-ring-channel-lines-excerpt.log":                  true,
	"gh-issue-gpu2-singlenode-info-commInitAll-init-complete-hang-with-g4-excerpt.log": true,
	"gh-issue-gpu8-singlenode-info-p2p-direct-pointer-pxn-tail-excerpt.log":            true,
	"gh-issue-h100x24-3node-info-nvls-heads-rank-prefixed-excerpt.log":                 true,
	"gh-issue-h100x8-singlenode-info-init-timings-rank-prefix-nccl2.2x-excerpt.log":    true,
	"gh-issue-l40x2-2node-roce-irdma-ibext-plugin-info-startup-excerpt.log":            true,
	"gh-issue-rtx4090x8-pcie-info-topology-graph-dump-excerpt.log":                     true,
}

// TestRegistryDetects: the default registry picks this importer for every
// corpus log but the NCCL_DEBUG-only excerpts, and Import through it
// succeeds.
func TestRegistryDetects(t *testing.T) {
	reg := all.Registry()
	for _, path := range corpus.Files(t, "corpus/nccl", ".log") {
		imp, err := reg.Detect(path)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
			continue
		}
		want := model.FormatNCCLTests
		if ncclOnly[filepath.Base(path)] {
			want = model.FormatJobLog
		}
		if imp.Format() != want {
			t.Errorf("%s: detected as %s, want %s", filepath.Base(path), imp.Format(), want)
			continue
		}
		if _, err := imp.Import(context.Background(), path, importers.Options{}); err != nil {
			t.Errorf("%s: %v", filepath.Base(path), err)
		}
	}
}
