package model

// RangeTrack is where a range lies besides its thread: its NVTX domain and,
// for GPU annotations, its device and stream. A trace has few distinct ones
// (one for all CPU ranges of the default domain), so they are interned
// (Trace.RangeTracks) and a Range holds a 4-byte TrackID: 16 bytes per range
// row fewer.
type RangeTrack struct {
	Domain StringID // NVTX domain, or "" for the default
	Device DeviceID // NoDevice for CPU ranges
	Stream StreamID // NoStream for CPU ranges
}

// TrackID indexes a trace's range tracks; 0 is the zero RangeTrack (device
// 0, stream 0, default domain), what a zero Range always meant.
type TrackID uint32

// TrackTable interns range tracks; index 0 is the zero one.
type TrackTable = InternTable[RangeTrack, TrackID]

// CPUTrack is the track of a CPU range of the default domain.
var CPUTrack = RangeTrack{Device: NoDevice, Stream: NoStream}

// RangeTrack returns the track (domain, device, stream) of range r.
func (t *Trace) RangeTrack(r *Range) RangeTrack { return t.RangeTracks.Get(r.Track) }

// InternTrack interns rt in the trace's range track table.
func (t *Trace) InternTrack(rt RangeTrack) TrackID { return t.RangeTracks.Intern(rt) }
