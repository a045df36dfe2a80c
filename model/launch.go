package model

// LaunchConfig is how a kernel was launched: its short name and its launch
// dimensions and resources. Most launches of one kernel share it, so a trace
// keeps each distinct configuration once (Trace.Configs) and a Kernel holds
// only its index: 36 bytes per kernel row become 4.
type LaunchConfig struct {
	ShortName StringID // short name where the capture has one
	Grid      [3]int32
	Block     [3]int32
	Registers int32 // registers per thread (0 = unknown)
	SharedMem int32 // static + dynamic shared memory bytes (0 = unknown)
}

// ConfigID indexes a trace's launch configurations. NoConfig, the zero value,
// is the zero configuration (nothing known), so a zero Kernel stays valid.
type ConfigID uint32

// NoConfig is the ConfigID of the zero LaunchConfig.
const NoConfig ConfigID = 0

// ConfigTable interns launch configurations. The zero value is ready to use;
// index 0 is always the zero configuration.
type ConfigTable struct {
	tab interned[LaunchConfig, ConfigID] // the index is dropped after import
}

// Intern returns the ID of c, adding it if it is new.
func (ct *ConfigTable) Intern(c LaunchConfig) ConfigID { return ct.tab.intern(c) }

// Get returns the configuration with the given ID (the zero configuration
// for unknown IDs).
func (ct *ConfigTable) Get(id ConfigID) LaunchConfig { return ct.tab.get(id) }

// Len returns the number of configurations including the zero one.
func (ct *ConfigTable) Len() int { return ct.tab.size() }

// dropIndex frees the lookup map once import is over; Intern rebuilds it.
func (ct *ConfigTable) dropIndex() { ct.tab.index = nil }

// share returns a table with the same configurations for another trace (a
// part of a split): its own index, and no spare capacity, so that what one
// side adds never overwrites the other's.
func (ct *ConfigTable) share() ConfigTable {
	v := ct.tab.vals
	return ConfigTable{tab: interned[LaunchConfig, ConfigID]{vals: v[:len(v):len(v)]}}
}

// LaunchConfig returns the launch configuration of kernel k.
func (t *Trace) LaunchConfig(k *Kernel) LaunchConfig { return t.Configs.Get(k.Config) }

// InternConfig interns c in the trace's configuration table.
func (t *Trace) InternConfig(c LaunchConfig) ConfigID { return t.Configs.Intern(c) }
