package ncclerrors

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/nccltests"
	"github.com/tracedx/tracedx/model"
)

const header = `# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   1001 on     node-a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   1002 on     node-a device  1 [0000:2b:00] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
`

const cleanLog = "# Collective test starting: all_reduce_perf\n" + header + `     1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0
     2097152        524288     float     sum      -1    30.00   69.91   69.91       0    30.00   69.91   69.91       0
     4194304       1048576     float     sum      -1    50.00   83.89   83.89       0    50.00   83.89   83.89       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 68.7433 
#
# Collective test concluded: all_reduce_perf
`

// plantedLog holds: wrong elements with an OOB failure, a run whose rows
// stop, a run with a header and no table, NCCL WARN lines, a failure, and
// two processes printing their own copy of a one-rank run.
const plantedLog = "# Collective test starting: all_reduce_perf\n" + header + `     1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0
     2097152        524288     float     sum      -1    30.00   69.91   69.91  1.67772e+07    30.00   69.91   69.91       0
     4194304       1048576     float     sum      -1    50.00   83.89   83.89       0    50.00   83.89   83.89       0
# Out of bounds values : 1 FAILED
# Avg bus bandwidth    : 68.7433 
#
# Collective test concluded: all_reduce_perf
# Collective test starting: all_gather_perf
` + header + `     1048576        131072     float     none      -1    20.00   52.43   26.21       0    20.00   52.43   26.21       0
# Collective test starting: broadcast_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   1001 on     node-a device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
node-a:1001:1010 [0] transport/shm.cc:590 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 9637892 bytes
node-a: Test NCCL failure common.cu:1204 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '
 .. node-a pid 1001: Test failure common.cu:915
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid   3001 on     node-x device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#  Rank  0 Group  0 Pid   4001 on     node-y device  0 [0000:1b:00] NVIDIA H100 80GB HBM3
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
     1048576        262144     float     sum      -1    20.00   52.43    0.00       0    20.00   52.43    0.00       0
     1048576        262144     float     sum      -1    20.00   52.43    0.00       0    20.00   52.43    0.00       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0 
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0 
`

func analyze(t *testing.T, text string) detectors.Result {
	t.Helper()
	tr, err := nccltests.Parse(strings.NewReader(text), "fixture.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

func TestClean(t *testing.T) {
	for _, f := range analyze(t, cleanLog).Findings {
		t.Errorf("unexpected finding: %s", f.Message)
	}
}

func TestPlanted(t *testing.T) {
	res := analyze(t, plantedLog)
	var msgs []string
	count := map[string]int{}
	for _, f := range res.Findings {
		msgs = append(msgs, f.Severity.String()+": "+f.Message)
		count[f.Title]++
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"1 of 3 rows report wrong elements (#wrong total 16777200, first at 2097152 bytes out-of-place); \"Out of bounds values : 1 FAILED\"",
		"the table stops after 1 rows at 1048576 bytes without its footer (maxBytes 4194304 not reached)",
		"NCCL call failed 1 time(s) at common.cu:1204",
		"failed to extend /dev/shm",
		"2 copies of the header, rank numbers repeated 1 time(s)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
	if count["nccl-tests run did not finish"] != 1 {
		t.Errorf("truncation findings: %d (the failed run is reported as a failure, not a hang)\n%s", count["nccl-tests run did not finish"], all)
	}
	for _, f := range res.Findings {
		if f.Title == "nccl-tests failed" && (f.Severity != model.SevError || !strings.Contains(f.Recommendation, "--ipc=host")) {
			t.Errorf("failure finding: %+v", f)
		}
	}
}

// TestExcerptIsIncompleteNotFailed: a log cut out of an issue thread that
// ends mid-table, with no failure line, is an incomplete log (info), not a
// failed run.
func TestExcerptIsIncompleteNotFailed(t *testing.T) {
	excerpt := "# Collective test starting: all_reduce_perf\n" + header + `     1048576        262144     float     sum      -1    20.00   52.43   52.43       0    20.00   52.43   52.43       0
     2097152        524288     float     sum      -1    30.00   69.91   69.91       0    30.00   69.91   69.91       0
`
	res := analyze(t, excerpt)
	var got []string
	for _, f := range res.Findings {
		got = append(got, f.Severity.String()+": "+f.Title)
		if f.Severity == model.SevError {
			t.Errorf("excerpt reported as an error: %s", f.Title)
		}
	}
	if !strings.Contains(strings.Join(got, "\n"), "incomplete") {
		t.Errorf("want an incomplete-log note, got %v", got)
	}
}
