package summary

import "github.com/tracedx/tracedx/model"

// nameRun is the rows of one trace that carry one name.
type nameRun struct {
	trace int
	rows  []int32
}

// byName groups the rows of a table over every trace of set by name: each
// trace's rows are ordered by name with a counting sort of their row
// numbers (4 bytes per row). It calls fn once per distinct name, in order of
// first appearance (trace by trace, row by row), with the name's runs in
// trace order and each run's rows in table order, and with the durations of
// all of them in one buffer that fn may reorder. Collecting a duration list
// per name instead held 8 bytes per row and the lists' append slack
// (24 MB at its peak for 2 M launches).
func byName(set *model.TraceSet, rows func(t *model.Trace) int, name func(t *model.Trace, i int) model.StringID,
	dur func(t *model.Trace, i int) int64, fn func(name string, runs []nameRun, d []int64)) {
	var names []string
	runs := map[string][]nameRun{}
	longest := 0
	for ti, t := range set.Traces {
		n := rows(t)
		count := map[model.StringID]int{}
		var ids []model.StringID // first-seen order
		for i := range n {
			id := name(t, i)
			if count[id] == 0 {
				ids = append(ids, id)
			}
			count[id]++
		}
		next := make(map[model.StringID]int, len(ids)) // where each name's next row goes
		off := 0
		for _, id := range ids {
			next[id] = off
			off += count[id]
		}
		order := make([]int32, n)
		for i := range n {
			id := name(t, i)
			order[next[id]] = int32(i)
			next[id]++
		}
		off = 0
		for _, id := range ids {
			s := t.Str(id)
			if _, seen := runs[s]; !seen {
				names = append(names, s)
			}
			runs[s] = append(runs[s], nameRun{trace: ti, rows: order[off : off+count[id] : off+count[id]]})
			off += count[id]
		}
	}
	for _, s := range names {
		n := 0
		for _, r := range runs[s] {
			n += len(r.rows)
		}
		longest = max(longest, n)
	}
	buf := make([]int64, 0, longest)
	for _, s := range names {
		d := buf[:0]
		for _, r := range runs[s] {
			t := set.Traces[r.trace]
			for _, i := range r.rows {
				d = append(d, dur(t, int(i)))
			}
		}
		fn(s, runs[s], d)
	}
}
