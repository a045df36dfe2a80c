package joblog

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// PyTorch c10d ProcessGroupNCCL messages (torch/csrc/distributed/c10d/
// ProcessGroupNCCL.cpp, PyTorch 2.1–2.6; the log prefix "[PG 1 Rank 0] " is
// 2.2+, "[PG ID 0 PG GUID 0(default_pg) Rank 0] " 2.5+):
//
//	[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE,
//	    NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.
//	[PG 0 Rank 0] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: 0.
//	[PG 1 Rank 3] Exception (either an error or timeout) detected by watchdog at work: 1580,
//	    last enqueued NCCL work: 1582, last completed NCCL work: 1579.
//	[PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress ...
//	[Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature ...
//	NCCL error in: .../ProcessGroupNCCL.cpp:1275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3
//	ncclUnhandledCudaError / ncclSystemError / ncclInternalError / ncclRemoteError: ...
var (
	reWork     = regexp.MustCompile(`WorkNCCL\(((?:[^()]|\([^()]*\))*)\)`)
	reRanFor   = regexp.MustCompile(`ran for (\d+) milliseconds`)
	rePGRank   = regexp.MustCompile(`\[PG (?:ID )?(\S+?)(?: PG GUID \S+?)? Rank (\d+)\]`)
	reRank     = regexp.MustCompile(`\[Rank (\d+)\]`)
	reLastWork = regexp.MustCompile(`(?:Timeout at NCCL work|detected by watchdog at work): (-?\d+), last enqueued NCCL work: (-?\d+), last completed NCCL work: (-?\d+)`)
	reStuck    = regexp.MustCompile(`watchdog got stuck for (\d+) seconds`)
	rePGName   = regexp.MustCompile(`\(([\w-]+)\)$`)
)

var ncclErrors = []struct{ needle, kind string }{
	{"unhandled cuda error", "cuda-error"},
	{"ncclUnhandledCudaError", "cuda-error"},
	{"unhandled system error", "system-error"},
	{"ncclSystemError", "system-error"},
	{"ncclInternalError", "internal-error"},
	{"internal error - please report this issue to the NCCL developers", "internal-error"},
	{"ncclRemoteError", "remote-error"},
	{"remote process exiting prematurely", "remote-error"},
}

// c10dLine recognises watchdog / NCCL error messages. It returns false for
// other lines; known lines that do not parse are warned about by the caller
// through warn.
func c10dLine(msg []byte, d decor, n int, j *model.JobLog, warn func(string, ...any)) bool {
	if !bytes.Contains(msg, []byte("NCCL")) && !bytes.Contains(msg, []byte("nccl")) && !bytes.Contains(msg, []byte("Watchdog")) {
		return false
	}
	s := string(msg)
	ev := model.WatchdogEvent{Rank: d.rank, Time: d.time, HasTime: d.hasTime, Line: n, SeqNum: -1, NumelIn: -1, NumelOut: -1,
		TimeoutMs: -1, RanForMs: -1, AtWork: -1, LastEnqueued: -1, LastCompleted: -1, StuckSec: -1}
	switch {
	case strings.Contains(s, "Watchdog caught collective operation timeout"):
		ev.Kind = "timeout"
		m := reWork.FindStringSubmatch(s)
		if m == nil {
			warn("watchdog timeout line without a readable WorkNCCL(...)")
			return true
		}
		for _, kv := range strings.Split(m[1], ", ") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "SeqNum":
				ev.SeqNum = parseInt(v)
			case "OpType":
				ev.Op = v
			case "NumelIn":
				ev.NumelIn = parseInt(v)
			case "NumelOut":
				ev.NumelOut = parseInt(v)
			case "Timeout(ms)":
				ev.TimeoutMs = parseInt(v)
			}
		}
		if ev.SeqNum < 0 || ev.Op == "" {
			warn("watchdog timeout: WorkNCCL(...) has no SeqNum or OpType: %q", clip(m[0], 120))
		}
		if m := reRanFor.FindStringSubmatch(s); m != nil {
			ev.RanForMs = parseInt(m[1])
		}
	case strings.Contains(s, "last enqueued NCCL work"):
		ev.Kind = "last-work"
		m := reLastWork.FindStringSubmatch(s)
		if m == nil {
			warn("watchdog work line without readable work numbers")
			return true
		}
		ev.AtWork, ev.LastEnqueued, ev.LastCompleted = parseInt(m[1]), parseInt(m[2]), parseInt(m[3])
	case strings.Contains(s, "watchdog got stuck for"):
		ev.Kind = "stuck"
		if m := reStuck.FindStringSubmatch(s); m != nil {
			ev.StuckSec = parseInt(m[1])
		}
	case strings.Contains(s, "Some NCCL operations have failed or timed out"):
		ev.Kind = "failed"
	default:
		for _, e := range ncclErrors {
			if strings.Contains(s, e.needle) {
				ev.Kind = e.kind
				break
			}
		}
		if ev.Kind == "" {
			return false
		}
	}
	if m := rePGRank.FindStringSubmatch(s); m != nil {
		ev.PG = m[1]
		ev.Rank = atoiS(m[2])
	} else if m := reRank.FindStringSubmatch(s); m != nil {
		ev.Rank = atoiS(m[1])
	}
	if m := rePGName.FindStringSubmatch(ev.PG); m != nil {
		ev.PG = m[1]
	}
	ev.Message = clip(string(bytes.TrimSpace(msg)), 300)
	if len(j.Watchdog) < maxEvents {
		j.Watchdog = append(j.Watchdog, ev)
	} else {
		j.Dropped++
	}
	return true
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
