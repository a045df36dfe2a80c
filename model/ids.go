package model

// DeviceID is a device's ordinal as the capture reports it (the physical
// index, not the rank). NoDevice marks CPU-side records.
type DeviceID int32

// NoDevice is the DeviceID of records that belong to no device.
const NoDevice DeviceID = -1

// StreamID is a GPU stream (queue) number as the capture reports it.
type StreamID int64

// NoStream marks records that belong to no stream.
const NoStream StreamID = -1

// ThreadID indexes Trace.Threads. NoThread marks records with no CPU thread.
type ThreadID int32

// NoThread is the ThreadID of records with no CPU thread.
const NoThread ThreadID = -1

// NoRank marks a trace whose rank is not known.
const NoRank = -1
