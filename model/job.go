package model

import (
	"fmt"
	"sort"
	"strings"
)

// Job says which job a set of inputs belongs to: how many ranks the job has
// (when any input states it) and which of them were given.
type Job struct {
	// WorldSize is the job's rank count; 0 when no input states it.
	WorldSize int
	// WorldSource names where WorldSize comes from ("kineto distributedInfo",
	// "nccl-tests log", ...); "" when unknown.
	WorldSource string
	// WorldInferred is true when WorldSize is inferred (not stated by an input).
	WorldInferred bool
	// Ranks are the distinct ranks given, ascending.
	Ranks []int
	// Unranked counts inputs whose rank is unknown.
	Unranked int
}

// worldSources names, per format, where a trace's WorldSize comes from.
var worldSources = map[Format]string{
	FormatKineto:    "Kineto distributedInfo",
	FormatNsys:      "Nsight Systems processes",
	FormatNCCLTests: "nccl-tests log",
	FormatJobLog:    "job log",
}

// JobOf derives the job of a set of traces.
func JobOf(traces []*Trace) Job {
	var j Job
	seen := map[int]bool{}
	for _, t := range traces {
		switch {
		case !t.IsTimeline():
			// A job log or benchmark log states the world size but is not a rank.
		case t.Rank == NoRank:
			j.Unranked++
		case !seen[t.Rank]:
			seen[t.Rank] = true
			j.Ranks = append(j.Ranks, t.Rank)
		}
		if t.WorldSize > j.WorldSize {
			j.WorldSize = t.WorldSize
			j.WorldSource = worldSources[t.Format]
			if j.WorldSource == "" {
				j.WorldSource = string(t.Format)
			}
			j.WorldInferred = t.Meta["world_size_inferred"] != ""
		}
	}
	sort.Ints(j.Ranks)
	return j
}

// IsTimeline says whether the trace is one rank's timeline (not a job log or
// a benchmark log).
func (t *Trace) IsTimeline() bool { return t.Bench == nil && t.JobLog == nil }

// Timelines returns the set's rank timelines, in order.
func (ts *TraceSet) Timelines() []*Trace {
	var out []*Trace
	for _, t := range ts.Traces {
		if t.IsTimeline() {
			out = append(out, t)
		}
	}
	return out
}

// Given returns how many ranks were given (ranked inputs plus unranked ones).
func (j Job) Given() int { return len(j.Ranks) + j.Unranked }

// MultiRank says whether the job has several ranks given.
func (j Job) MultiRank() bool { return j.Given() > 1 }

// Describe says "N of M ranks" (or "N ranks, world size unknown").
func (j Job) Describe() string {
	n := j.Given()
	unit := "ranks"
	if n == 1 {
		unit = "rank"
	}
	switch {
	case j.WorldSize > 0 && j.WorldInferred:
		return fmt.Sprintf("%d of %d %s (world size inferred from the %s)", n, j.WorldSize, unit, j.WorldSource)
	case j.WorldSize > 0:
		return fmt.Sprintf("%d of %d %s", n, j.WorldSize, unit)
	}
	return fmt.Sprintf("%d %s, world size unknown", n, unit)
}

// Short says "N of M ranks" without saying where M comes from.
func (j Job) Short() string {
	if j.WorldSize > 0 {
		return fmt.Sprintf("%d of %d ranks", j.Given(), j.WorldSize)
	}
	return fmt.Sprintf("%d ranks", j.Given())
}

// RanksText lists the given ranks compactly: "0-7", "0, 3, 5-6".
func (j Job) RanksText() string { return RangesText(j.Ranks) }

// RangesText writes sorted ints as runs: "0-3, 5, 7-8".
func RangesText(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		k := i
		for k+1 < len(xs) && xs[k+1] == xs[k]+1 {
			k++
		}
		if k == i {
			parts = append(parts, fmt.Sprint(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[k]))
		}
		i = k + 1
	}
	return strings.Join(parts, ", ")
}

// RankSummary is one row of the job table: one rank's GPU time, exposed
// communication, arrival lateness and step time. Durations of -1 are unknown.
type RankSummary struct {
	Rank    int
	Devices int
	Span    Duration // summed over the rank's devices
	Busy    Duration
	Idle    Duration
	// ExposedComm is communication no computation overlaps (-1 = no communication).
	ExposedComm Duration
	// Lateness is the mean arrival lateness at matched collectives (-1 = not measured).
	Lateness Duration
	// StepP50 is the median profiler step time (-1 = no steps); Steps counts them.
	StepP50 Duration
	Steps   int
}

// HostSets groups hosts by the set of names each lists (perHost: host →
// names, repeats allowed; a host with none forms the empty set): one
// "name<sep>name on host, host" entry per distinct set, names and hosts
// sorted, entries sorted. More than one entry means the hosts differ (e.g.
// their NCCL HCAs).
func HostSets(perHost map[string][]string, sep string) []string {
	sets := map[string][]string{}
	for host, names := range perHost {
		seen := map[string]bool{}
		var uniq []string
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				uniq = append(uniq, n)
			}
		}
		sort.Strings(uniq)
		k := strings.Join(uniq, sep)
		sets[k] = append(sets[k], host)
	}
	list := make([]string, 0, len(sets))
	for k, hosts := range sets {
		sort.Strings(hosts)
		list = append(list, fmt.Sprintf("%s on %s", k, strings.Join(hosts, ", ")))
	}
	sort.Strings(list)
	return list
}
