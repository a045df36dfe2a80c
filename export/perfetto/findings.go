package perfetto

import (
	"strconv"

	"github.com/tracedx/tracedx/export/timeline"
	"github.com/tracedx/tracedx/model"
)

// findingSlice is one evidence window of one finding, placed on a lane.
type findingSlice struct {
	f          *model.Finding
	ref        string
	ev         *model.Evidence
	start, end int64 // on the set clock
	tid        int64
}

type findingLanes struct {
	slices []findingSlice
	lanes  []threadMeta // tid order
}

// placeFindings puts every evidence window that intersects win on a lane of
// its rule: a new lane is opened when it would overlap a slice already there,
// so that no lane holds overlapping slices.
func placeFindings(set *model.TraceSet, findings []model.Finding, win *model.Interval) findingLanes {
	var out findingLanes
	refs := timeline.FindingRefs(findings)
	type lane struct {
		tid  int64
		busy [][2]int64
	}
	byRule := map[string][]*lane{}
	for i := range findings {
		f := &findings[i]
		for j := range f.Evidence {
			ev := &f.Evidence[j]
			off := int64(timeline.RankOffset(set, ev.Rank))
			st, en := int64(ev.Start)+off, int64(ev.End)+off
			if en < st {
				en = st
			}
			if win != nil && (st > int64(win.End) || en < int64(win.Start)) {
				continue
			}
			var target *lane
			for _, l := range byRule[f.Rule] {
				free := true
				for _, b := range l.busy {
					if st < b[1] && b[0] < en || st == b[0] {
						free = false
						break
					}
				}
				if free {
					target = l
					break
				}
			}
			if target == nil {
				n := len(byRule[f.Rule])
				target = &lane{tid: int64(len(out.lanes) + 1)}
				byRule[f.Rule] = append(byRule[f.Rule], target)
				name := f.Rule
				if n > 0 {
					name += " (" + strconv.Itoa(n+1) + ")"
				}
				out.lanes = append(out.lanes, threadMeta{tid: target.tid, name: name})
			}
			target.busy = append(target.busy, [2]int64{st, en})
			out.slices = append(out.slices, findingSlice{f: f, ref: refs[i], ev: ev, start: st, end: en, tid: target.tid})
		}
	}
	return out
}

func (e *encoder) findingsMeta(pid int, fl findingLanes) {
	e.meta(pid, 0, "process_name", "name", "tracedx findings", nil)
	s := -1
	e.meta(pid, 0, "process_sort_index", "sort_index", "", &s)
	for _, l := range fl.lanes {
		e.meta(pid, l.tid, "thread_name", "name", l.name, nil)
		idx := int(l.tid)
		e.meta(pid, l.tid, "thread_sort_index", "sort_index", "", &idx)
	}
}

func (e *encoder) findings(pid int, fl findingLanes) {
	for _, s := range fl.slices {
		f := s.f
		// The ref (RULE#N) leads the name so that a search for it in the
		// viewer finds the slice; HTML reports link to it by this ref.
		name := s.ref
		if f.Title != "" {
			name += ": " + f.Title
		}
		e.slice(pid, s.tid, name, "finding", s.start, s.end, true)
		e.args()
		e.argStr("rule", f.Rule)
		e.argStr("ref", s.ref)
		e.argStr("severity", f.Severity.String())
		e.argStr("title", f.Title)
		e.argStr("message", f.Message)
		if s.ev.Note != "" {
			e.argStr("note", s.ev.Note)
		}
		if s.ev.Rank != model.NoRank {
			e.argInt("rank", int64(s.ev.Rank))
		}
		if s.ev.Device != model.NoDevice {
			e.argInt("device", int64(s.ev.Device))
		}
		if s.ev.Stream != model.NoStream {
			e.argInt("stream", int64(s.ev.Stream))
		}
		if s.ev.Thread >= 0 {
			e.argInt("thread", s.ev.Thread)
		}
		e.closeArgs()
		e.end()
	}
}
