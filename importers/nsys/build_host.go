package nsys

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Host ranges: NVTX, OS runtime calls with their call chains, and the
// Python GIL.

// NVTX event types (ENUM_NSYS_EVENT_TYPE; ids never renumbered).
const (
	nvtxCategory     = 33
	nvtxMark         = 34
	nvtxThreadName   = 39
	nvtxPushPop      = 59
	nvtxStartEnd     = 60
	nvtxDomainCreate = 75
)

func (b *builder) nvtxText(row int, r *nvtxRow) model.StringID {
	if r.TextValid {
		return b.t.Intern(r.Text)
	}
	if r.TextID >= 0 {
		id, ok := b.sid(r.TextID)
		if !ok {
			b.warnRow(tNVTX, row, "unknown text string id %d", r.TextID)
		}
		return id
	}
	return model.NoString
}

func (b *builder) nvtx(row int, r *nvtxRow) {
	pid := pidOf(r.GlobalTid)
	switch r.EventType {
	case nvtxDomainCreate:
		b.nvtxDomains[[2]int64{pid, r.DomainID}] = b.nvtxText(row, r)
		return
	case nvtxThreadName:
		if r.TextValid && r.Text != "" {
			b.nvtxThreadNames[pid<<24|tidOf(r.GlobalTid)] = r.Text
		}
		return
	case nvtxPushPop, nvtxStartEnd, nvtxMark:
	default:
		return
	}
	if !b.inRange(tNVTX, row, r.Start, r.Start) || (r.EndValid && r.EventType != nvtxMark && !b.inRange(tNVTX, row, r.End, r.End)) {
		return
	}
	kind := model.RangeNVTX
	end := r.End
	open := false
	switch {
	case r.EventType == nvtxMark:
		kind, end = model.RangeMark, r.Start
	case !r.EndValid:
		open, end = true, r.Start
	case r.End < r.Start:
		b.warnRow(tNVTX, row, "range ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	rg := model.Range{
		Start: model.Time(r.Start), End: model.Time(end),
		Name:   b.nvtxText(row, r),
		Thread: b.thread(r.GlobalTid),
		Kind:   kind,
	}
	idx := len(b.t.Ranges)
	track := model.CPUTrack
	if r.DomainID != 0 {
		if d, ok := b.nvtxDomains[[2]int64{pid, r.DomainID}]; ok {
			track.Domain = d
		} else {
			b.pendingDomain = append(b.pendingDomain, pendingDomain{idx, pid, r.DomainID})
		}
	}
	rg.Track = b.t.InternTrack(track)
	b.t.Ranges = append(b.t.Ranges, rg)
	if open {
		b.openRanges = append(b.openRanges, idx)
	}
	b.seeTime(end)
}

// ---- OS runtime ----

func (b *builder) addCallchainFrame(row int, r *callchainRow) {
	name := model.NoString
	if id, ok := b.sid(r.Symbol); ok && id != model.NoString {
		name = id
	} else if id, ok := b.sid(r.Module); ok && id != model.NoString {
		name = id
	} else {
		name = b.t.Intern("[unknown]")
	}
	b.chainFrames[r.ID] = append(b.chainFrames[r.ID], chainFrame{r.Depth, name})
}

// chain returns the t.CallChains index of an OSRT call chain (-1 = none).
func (b *builder) chain(id int64) int32 {
	if id <= 0 {
		return -1
	}
	if i, ok := b.chainIndex[id]; ok {
		return i
	}
	fr, ok := b.chainFrames[id]
	if !ok || len(b.t.CallChains) >= math.MaxInt32 {
		b.chainIndex[id] = -1
		return -1
	}
	sort.SliceStable(fr, func(i, j int) bool { return fr[i].depth < fr[j].depth })
	names := make([]model.StringID, len(fr))
	for i, f := range fr {
		names[i] = f.name
	}
	i := int32(len(b.t.CallChains))
	b.t.CallChains = append(b.t.CallChains, names)
	b.chainIndex[id] = i
	return i
}

func (b *builder) osrt(row int, r *osrtRow) {
	if !b.inRange(tOSRT, row, r.Start, r.End) {
		return
	}
	if r.EventClass == 31 || r.EventClass == 32 {
		b.osrtPseudo++ // OS runtime start / finish pseudo-events
		return
	}
	if r.End < r.Start {
		b.warnRow(tOSRT, row, "OS runtime call ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	name, ok := b.sid(r.NameID)
	if !ok {
		b.warnRow(tOSRT, row, "unknown name string id %d", r.NameID)
		name = b.t.Intern(fmt.Sprintf("[unknown OS runtime name id %d]", r.NameID))
	}
	b.t.OSCalls = append(b.t.OSCalls, model.OSCall{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Name: name, Thread: b.thread(r.GlobalTid), CallChain: b.chain(r.CallchainID),
	})
	b.seeTime(r.End)
}

// ---- counters ----

// gilState classifies a GIL table's state text.
func gilState(s string) (model.GILState, bool) {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "wait") || strings.Contains(l, "acquir") || strings.Contains(l, "take"):
		return model.GILWaiting, true
	case strings.Contains(l, "hold") || strings.Contains(l, "held") || strings.Contains(l, "own"):
		return model.GILHeld, true
	}
	return model.GILWaiting, false
}

func (b *builder) gil(table string, row int, r *gilRow) {
	if !b.inRange(table, row, r.Start, r.End) {
		return
	}
	if r.End < r.Start {
		b.warnRow(table, row, "GIL interval ends before it starts (%d < %d)", r.End, r.Start)
		return
	}
	st, ok := gilState(r.State)
	if !ok {
		b.warnRow(table, row, "unknown GIL state %q", r.State)
		return
	}
	b.t.GIL = append(b.t.GIL, model.GILInterval{
		Start: model.Time(r.Start), End: model.Time(r.End),
		Thread: b.thread(r.GlobalTid), State: st,
	})
	b.gilRows++
	b.seeTime(r.End)
}

// ---- finish ----
