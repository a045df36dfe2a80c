package nccltests

import (
	"fmt"
	"strings"
)

// This file generates the synthetic nccl-tests logs the tests use. They
// follow the printf formats of nccl-tests (see the package docs and
// HACKING.md); every number is computed, none copied from a real log.

// gen builds one log.
type gen struct {
	sb strings.Builder
	// prefix is put in front of every line (launcher decorations).
	prefix string
	eol    string
}

func (g *gen) ln(format string, args ...any) {
	if g.eol == "" {
		g.eol = "\n"
	}
	g.sb.WriteString(g.prefix)
	fmt.Fprintf(&g.sb, format, args...)
	g.sb.WriteString(g.eol)
}

func (g *gen) raw(s string) { g.sb.WriteString(s) }

func (g *gen) String() string { return g.sb.String() }

// runSpec describes one generated run.
type runSpec struct {
	prog       string // "all_reduce_perf"
	version    string // nccl-tests version line ("" = none)
	start      bool   // "# Collective test starting/concluded"
	hosts      []string
	gpusPer    int
	gpu        string
	minB, maxB int64
	dtype      string
	redop      string
	root       int
	peak       float64 // algbw plateau in GB/s
	lat        float64 // small-message latency in us
	wrongAt    int64   // size whose #wrong is non-zero (0 = none)
	oldFormat  bool    // <= 2.12: error column, no root (or no redop)
	stopAfter  int     // rows printed before the log stops (0 = all)
	ipNA       bool    // in-place #wrong always N/A (alltoall, sendrecv)
	infoInRow  bool    // an NCCL INFO line glued into the middle of the 3rd row
}

// factor is the busbw/algbw factor of nccl-tests for a collective on n ranks.
func factor(prog string, n int) float64 {
	nf := float64(n)
	switch strings.TrimSuffix(prog, "_perf") {
	case "all_reduce":
		return 2 * (nf - 1) / nf
	case "all_gather", "reduce_scatter", "alltoall":
		return (nf - 1) / nf
	}
	return 1
}

// times returns the generated time (us) for size bytes.
func (s *runSpec) time(size int64) float64 {
	return s.lat + float64(size)/(s.peak*1e3)
}

// fmtNum mimics getFloatStr: 2 decimals when they fit the width, then 1,
// then 0, then exponent.
func fmtNum(v float64, width int) string {
	for _, prec := range []int{2, 1, 0} {
		s := fmt.Sprintf("%.*f", prec, v)
		if len(s) <= width {
			return fmt.Sprintf("%*s", width, s)
		}
	}
	return fmt.Sprintf("%*.0e", width, v)
}

func (g *gen) run(s runSpec) {
	n := len(s.hosts) * s.gpusPer
	if s.version != "" {
		g.ln("# nccl-tests version %s nccl-headers=22902 nccl-library=22902", s.version)
	}
	if s.start {
		g.ln("# Collective test starting: %s", s.prog)
	}
	if s.oldFormat {
		g.ln("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 validation: 1 ", s.minB, s.maxB)
	} else {
		g.ln("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0", s.minB, s.maxB)
	}
	g.ln("#")
	g.ln("# Using devices")
	rank := 0
	for hi, h := range s.hosts {
		for d := 0; d < s.gpusPer; d++ {
			if s.oldFormat {
				g.ln("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s", rank, 1000+hi*10+d, h, d, 0x10+d*16, s.gpu)
			} else {
				g.ln("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] %s", rank, 1000+hi*10+d, h, d, 0x10+d*16, s.gpu)
			}
			rank++
		}
	}
	g.ln("#")
	if s.oldFormat {
		g.ln("#                                                     out-of-place                       in-place          ")
		g.ln("#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error")
		g.ln("#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ")
	} else {
		g.ln("#                                                              out-of-place                       in-place          ")
		g.ln("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ")
		g.ln("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ")
	}
	f := factor(s.prog, n)
	var sum float64
	var cnt int
	row := 0
	for size := s.minB; size <= s.maxB; size *= 2 {
		row++
		if s.stopAfter > 0 && row > s.stopAfter {
			return
		}
		count := size / 4
		if f < 1 && f > 0 {
			count = size / 4 / int64(n)
		}
		half := func(t float64, ip bool) string {
			alg := float64(size) / t / 1e3
			bus := alg * f
			algS, busS := fmtNum(alg, 6), fmtNum(bus, 6)
			var pb float64
			fmt.Sscan(busS, &pb)
			sum += pb
			cnt++
			if s.oldFormat {
				return fmt.Sprintf("  %7s  %6s  %6s  %5s", fmtNum(t, 7), algS, busS, "5e-07")
			}
			w := "0"
			if size == s.wrongAt && !ip {
				w = "1.67772e+07"
			}
			if ip && s.ipNA {
				w = "N/A"
			}
			return fmt.Sprintf("  %7s  %6s  %6s  %6s", fmtNum(t, 7), algS, busS, w)
		}
		t := s.time(size)
		var pre string
		if s.oldFormat {
			pre = fmt.Sprintf("%12d  %12d  %6s  %6s", size, count, s.dtype, s.redop)
		} else {
			pre = fmt.Sprintf("%12d  %12d  %8s  %6s  %6d", size, count, s.dtype, s.redop, s.root)
		}
		oop, ip := half(t, false), half(t*1.01, true)
		if s.infoInRow && row == 3 {
			g.raw(g.prefix + pre + oop + "node-a:1000:1077 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n")
			g.raw(g.prefix + ip + g.eol)
			continue
		}
		g.ln("%s%s%s", pre, oop, ip)
	}
	oob := "0 OK"
	if s.wrongAt > 0 {
		oob = "1 FAILED"
	}
	g.ln("# Out of bounds values : %s", oob)
	g.ln("# Avg bus bandwidth    : %g ", roundSig(sum/float64(cnt), 6))
	g.ln("#")
	if s.start {
		g.ln("# Collective test concluded: %s", s.prog)
		g.ln("#")
	}
	g.ln("")
}

func roundSig(v float64, sig int) float64 {
	var r float64
	fmt.Sscan(fmt.Sprintf("%.*g", sig, v), &r)
	return r
}

// infoBlock prints NCCL_DEBUG=INFO init lines for a run on hosts.
func (g *gen) infoBlock(hosts []string, gpusPer int, network string, gdr bool, nvls int) {
	n := len(hosts) * gpusPer
	for hi, h := range hosts {
		for d := 0; d < gpusPer; d++ {
			pid := 1000 + hi*10 + d
			pre := fmt.Sprintf("%s:%d:%d [%d] NCCL INFO ", h, pid, pid+77, d)
			if hi == 0 && d == 0 {
				g.ln("%sNCCL version 2.29.2+cuda12.9", pre)
				g.ln("%sNCCL_IB_HCA set by environment to mlx5.", pre)
			}
			if network == "IB" {
				g.ln("%sNET/IB : Using [0]mlx5_%d:1/IB [RO]; OOB eth0:10.0.0.%d<0>", pre, d, hi+1)
			} else {
				g.ln("%sNET/Socket : Using [0]eth0:10.0.0.%d<0>", pre, hi+1)
			}
			g.ln("%sUsing network %s", pre, network)
			if nvls >= 0 {
				avail := "available"
				if nvls == 0 {
					avail = "not available"
				}
				g.ln("%sNVLS multicast support is %s on dev %d", pre, avail, d)
			}
			r := hi*gpusPer + d
			next := (r + 1) % n
			if gpusPer > 1 {
				g.ln("%sChannel 00/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read", pre, r, d, next, (d+1)%gpusPer)
			}
			if len(hosts) > 1 {
				via := "NET/" + network + "/0"
				if gdr {
					via += "/GDRDMA"
				}
				g.ln("%sChannel 01/0 : %d[%d] -> %d[%d] [send] via %s", pre, r, d, next, d, via)
			}
			nv := 0
			if nvls > 0 {
				nv = 16
			}
			g.ln("%s16 coll channels, 16 collnet channels, %d nvls channels, 32 p2p channels, 32 p2p channels per peer", pre, nv)
			g.ln("%sncclCommInitRank comm 0x5566%04x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0xabc - Init COMPLETE", pre, r, r, n, d, d, 0x10+d*16)
		}
	}
}
