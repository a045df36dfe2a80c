package joblog

import (
	"bytes"
	"regexp"
	"time"

	"github.com/tracedx/tracedx/model"
)

// decor is what a line's decorations said.
type decor struct {
	time    model.Time
	hasTime bool
	rank    int    // model.NoRank when no launcher prefix names one
	inst    string // engine instance: "TP0", "DP0", "DP1 TP0", ...
	source  string // Ray / vLLM process name ("APIServer", "EngineCore_DP0")
	level   byte   // 'I', 'W', 'E', 'F', 'D' or 0
	any     bool   // at least one decoration was removed
}

var (
	// Docker / Kubernetes / ISO 8601 timestamps, optionally bracketed,
	// optionally followed by SGLang's " TP0" / " DP1 TP0" instance tags.
	reISO = regexp.MustCompile(`^\[?(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?((?: (?:TP|DP|PP|EP|CP)\d+)*)\]?(?:\s+-\s+|\s+|$)`)
	// SGLang 2024: "[16:43:29 TP0] " / "[16:43:29] ".
	reClock = regexp.MustCompile(`^\[(\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?((?: (?:TP|DP|PP|EP|CP)\d+)*)\]\s*`)
	// Python logging as vLLM configures it: "INFO 07-28 06:42:09 [loggers.py:118] "
	// (V0 before 0.7: "INFO 08-20 10:18:39 scheduler.py:1141] ").
	reVLLM = regexp.MustCompile(`^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))? (?:\[[\w./-]+:\d+\] ?|[\w./-]+:\d+\] ?)?`)
	// glog (c10d, TensorRT-LLM): "[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] ",
	// "[E ProcessGroupNCCL.cpp:563] " (c10 does not pad the month: "E321"), "I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] ".
	reGlog = regexp.MustCompile(`^\[?([IWEF])(?:(\d{1,2})(\d\d))?(?: ?(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?)?(?: +\d+)? ([\w.-]+:\d+)\] ?`)
	// Ray / vLLM multiprocess prefixes: "(APIServer pid=1) ", "(RayWorkerWrapper pid=12, ip=10.0.0.2) ",
	// Ray's bare "(pid=12) " / "(pid=12, ip=10.0.0.2) ".
	rePid = regexp.MustCompile(`^\((?:([A-Za-z_][\w.-]*) )?pid=\d+(?:, ip=[\d.:a-f]+)?\)\s*`)
	// kubectl logs --prefix: "[pod/vllm-0/vllm] ".
	reKubePrefix = regexp.MustCompile(`^\[pod/([\w.-]+)/[\w.-]+\]\s*`)
	// TensorRT-LLM: the Python logger (tensorrt_llm/logger.py, 0.5+)
	// "[12/18/2024-03:35:37] [TRT-LLM] [MPI_Rank 1] [I] " and the C++ logger
	// "[TensorRT-LLM][INFO] ".
	reTRTTime = regexp.MustCompile(`^\[(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)\]\s*`)
	reTRTTag  = regexp.MustCompile(`^\[(?:TRT-LLM|TensorRT-LLM)\](?:\s*\[MPI_Rank (\d+)\])?\s*(?:\[([IWEFV]|INFO|WARNING|ERROR|VERBOSE|DEBUG)\]\s*)?`)
	reTag     = regexp.MustCompile(`(TP|DP|PP|EP)(\d+)`)
	// Plain level words: "INFO: ", "WARNING ".
	reLevel = regexp.MustCompile(`^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?::\s*|\s+)`)
)

// strip removes the decorations at the start of b (outermost first) and
// returns the message and what the decorations said.
func strip(b []byte) ([]byte, decor) {
	d := decor{rank: model.NoRank}
	for steps := 0; steps < 12 && len(b) > 0; steps++ {
		rest, ok := stripOne(b, &d)
		if !ok {
			break
		}
		d.any = true
		b = rest
	}
	return b, d
}

func (d *decor) setTime(t model.Time) {
	if !d.hasTime {
		d.time, d.hasTime = t, true
	}
}

func (d *decor) setLevel(c byte) {
	if d.level == 0 {
		d.level = c
	}
}

func (d *decor) setInst(tags []byte) {
	if d.inst == "" && len(tags) > 0 {
		d.inst = string(bytes.TrimSpace(tags))
	}
}

func stripOne(b []byte, d *decor) ([]byte, bool) {
	c := b[0]
	switch {
	case c == '[':
		// torchrun: [rank3]: / [default3]:
		if r, n := rankTag(b); n > 0 {
			if d.rank == model.NoRank {
				d.rank = r
			}
			return trimSpace(b[n:]), true
		}
		// Open MPI: [1,3]<stdout>:
		if i := bytes.Index(b, []byte("]<std")); i > 2 && i < 24 {
			inner := b[1:i]
			if k := bytes.IndexByte(inner, ','); k > 0 && isDigits(inner[:k]) && isDigits(inner[k+1:]) {
				if j := bytes.Index(b[i:], []byte(">:")); j > 0 {
					if d.rank == model.NoRank {
						d.rank = atoi(inner[k+1:])
					}
					return trimSpace(b[i+j+2:]), true
				}
			}
		}
		// "[80746] " (paste line numbers, Hydra ranks). "[3] NCCL ..." keeps its device.
		if i := bytes.IndexByte(b, ']'); i > 1 && i < 12 && isDigits(b[1:i]) && i+1 < len(b) && b[i+1] == ' ' {
			rest := b[i+2:]
			if !bytes.HasPrefix(rest, []byte("NCCL ")) {
				return rest, true
			}
		}
		if m := reISO.FindSubmatchIndex(b); m != nil {
			isoTime(b, m, d)
			return b[m[1]:], true
		}
		if m := reClock.FindSubmatchIndex(b); m != nil {
			d.setTime(clock(2000, 1, 1, b, m[2:]))
			if m[10] >= 0 {
				d.setInst(b[m[10]:m[11]])
			}
			return b[m[1]:], true
		}
		if m := reGlog.FindSubmatchIndex(b); m != nil {
			glogTime(b, m, d)
			return b[m[1]:], true
		}
		if m := reKubePrefix.FindSubmatchIndex(b); m != nil {
			if d.source == "" {
				d.source = string(b[m[2]:m[3]])
			}
			return b[m[1]:], true
		}
		if m := reTRTTime.FindSubmatchIndex(b); m != nil {
			d.setTime(clock(atoi(b[m[6]:m[7]]), atoi(b[m[2]:m[3]]), atoi(b[m[4]:m[5]]), b, append(m[8:14:14], -1, -1)))
			return b[m[1]:], true
		}
		if m := reTRTTag.FindSubmatchIndex(b); m != nil {
			if m[2] >= 0 && d.rank == model.NoRank {
				d.rank = atoi(b[m[2]:m[3]])
			}
			if m[4] >= 0 {
				d.setLevel(b[m[4]])
			}
			return b[m[1]:], true
		}
	case c >= '0' && c <= '9':
		// Slurm --label: "12: "
		if i := bytes.IndexByte(b, ':'); i > 0 && i < 7 && isDigits(b[:i]) && i+1 < len(b) && b[i+1] == ' ' {
			if d.rank == model.NoRank {
				d.rank = atoi(b[:i])
			}
			return b[i+2:], true
		}
		if m := reISO.FindSubmatchIndex(b); m != nil {
			isoTime(b, m, d)
			return b[m[1]:], true
		}
	case c == '(':
		if m := rePid.FindSubmatchIndex(b); m != nil {
			if m[2] >= 0 {
				name := b[m[2]:m[3]]
				if d.source == "" {
					d.source = string(name)
				}
				if t := reTag.FindAll(name, -1); len(t) > 0 {
					d.setInst(bytes.Join(t, []byte(" ")))
				}
			}
			return b[m[1]:], true
		}
	case c >= 'A' && c <= 'Z':
		if m := reVLLM.FindSubmatchIndex(b); m != nil {
			d.setLevel(b[m[2]])
			d.setTime(clock(2000, atoi(b[m[4]:m[5]]), atoi(b[m[6]:m[7]]), b, m[8:]))
			return b[m[1]:], true
		}
		if c == 'I' || c == 'W' || c == 'E' || c == 'F' {
			if m := reGlog.FindSubmatchIndex(b); m != nil && m[4] >= 0 {
				glogTime(b, m, d)
				return b[m[1]:], true
			}
		}
		if m := reLevel.FindIndex(b); m != nil {
			d.setLevel(b[0])
			return b[m[1]:], true
		}
	}
	return b, false
}

// rankTag matches "[rankN]:" and "[defaultN]:" and returns N and the length.
func rankTag(b []byte) (int, int) {
	for _, p := range [][]byte{[]byte("[rank"), []byte("[default")} {
		if bytes.HasPrefix(b, p) {
			i := len(p)
			j := i
			for j < len(b) && b[j] >= '0' && b[j] <= '9' {
				j++
			}
			if j > i && j+1 < len(b)+1 && j < len(b) && b[j] == ']' {
				n := j + 1
				if n < len(b) && b[n] == ':' {
					n++
				}
				return atoi(b[i:j]), n
			}
		}
	}
	return 0, 0
}

func isoTime(b []byte, m []int, d *decor) {
	year, mon, day := atoi(b[m[2]:m[3]]), atoi(b[m[4]:m[5]]), atoi(b[m[6]:m[7]])
	t := clock(year, mon, day, b, m[8:])
	if m[16] >= 0 && b[m[16]] != 'Z' {
		z := b[m[16]:m[17]]
		sign := int64(1)
		if z[0] == '-' {
			sign = -1
		}
		z = bytes.ReplaceAll(z[1:], []byte(":"), nil)
		if len(z) == 4 {
			off := int64(atoi(z[:2])*3600+atoi(z[2:])*60) * int64(time.Second)
			t -= model.Time(sign * off)
		}
	}
	d.setTime(t)
	if m[18] >= 0 {
		d.setInst(b[m[18]:m[19]])
	}
}

func glogTime(b []byte, m []int, d *decor) {
	d.setLevel(b[m[2]])
	if m[8] >= 0 {
		mon, day := 1, 1
		if m[4] >= 0 {
			mon, day = atoi(b[m[4]:m[5]]), atoi(b[m[6]:m[7]])
		}
		d.setTime(clock(2000, mon, day, b, m[8:]))
	}
}

// clock builds a time from submatch indices h, m, s, frac (fraction optional).
func clock(year, mon, day int, b []byte, idx []int) model.Time {
	h, mi, s := atoi(b[idx[0]:idx[1]]), atoi(b[idx[2]:idx[3]]), atoi(b[idx[4]:idx[5]])
	ns := 0
	if idx[6] >= 0 {
		f := b[idx[6]:idx[7]]
		ns = atoi(f)
		for k := len(f); k < 9; k++ {
			ns *= 10
		}
	}
	return model.Time(time.Date(year, time.Month(mon), day, h, mi, s, ns, time.UTC).UnixNano())
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// atoi parses leading decimal digits (saturating; non-digits stop it).
func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		if n < 1<<40 {
			n = n*10 + int(c-'0')
		}
	}
	return n
}
