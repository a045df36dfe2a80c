package model

// LaunchConfig is how a kernel was launched: its short name, its launch
// dimensions and resources, the stream it was launched on and the CUDA graph
// it ran in (as cudaLaunchConfig_t, the stream is part of a launch). Most
// launches of one kernel share it, so a trace keeps each distinct
// configuration once (Trace.Configs) and a Kernel holds only its index: 52
// bytes per kernel row become 4.
type LaunchConfig struct {
	ShortName StringID // short name where the capture has one
	Grid      [3]int32
	Block     [3]int32
	Registers int32 // registers per thread (0 = unknown)
	SharedMem int32 // static + dynamic shared memory bytes (0 = unknown)
	Stream    StreamID
	// GraphID is the CUDA graph the kernel ran in (0 = none).
	GraphID int64
}

// ConfigID indexes a trace's launch configurations. NoConfig, the zero value,
// is the zero configuration (nothing known), so a zero Kernel stays valid.
type ConfigID uint32

// NoConfig is the ConfigID of the zero LaunchConfig.
const NoConfig ConfigID = 0

// ConfigTable interns launch configurations; index 0 is the zero one.
type ConfigTable = InternTable[LaunchConfig, ConfigID]

// LaunchConfig returns the launch configuration of kernel k.
func (t *Trace) LaunchConfig(k *Kernel) LaunchConfig { return t.Configs.Get(k.Config) }

// KernelStream returns the stream kernel k ran on.
func (t *Trace) KernelStream(k *Kernel) StreamID { return t.Configs.at(k.Config).Stream }

// KernelGraph returns the CUDA graph kernel k ran in (0 = none).
func (t *Trace) KernelGraph(k *Kernel) int64 { return t.Configs.at(k.Config).GraphID }

// InternConfig interns c in the trace's configuration table.
func (t *Trace) InternConfig(c LaunchConfig) ConfigID { return t.Configs.Intern(c) }
