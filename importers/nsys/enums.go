package nsys

import (
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Built-in copies of the CUDA enums for exports before 2022.4, which have no
// ENUM_* tables. The ids are CUPTI's and were identical in every export that
// has the tables (2022.4 to 2026.x).
var builtinCopyKind = map[int64]string{
	0: "Unknown", 1: "Host-to-Device", 2: "Device-to-Host", 3: "Host-to-Array",
	4: "Array-to-Host", 5: "Array-to-Array", 6: "Array-to-Device", 7: "Device-to-Array",
	8: "Device-to-Device", 9: "Host-to-Host", 10: "Peer-to-Peer",
	11: "Unified Host-to-Device", 12: "Unified Device-to-Host", 13: "Unified Device-to-Device",
}

var builtinMemKind = map[int64]string{
	0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed",
	5: "Device Static", 6: "Managed Static", 7: "Unknown",
}

// copyKindOf maps an ENUM_CUDA_MEMCPY_OPER label (or symbol) to the model.
func copyKindOf(label string) model.MemOpKind {
	l := strings.ToLower(label)
	l = strings.NewReplacer("-", "", "_", "", " ", "").Replace(l)
	switch {
	case strings.Contains(l, "unified") || strings.Contains(l, "uvm"):
		return model.MemUVM
	case strings.Contains(l, "peer") || strings.Contains(l, "ptop"):
		return model.MemPtoP
	case strings.Contains(l, "hosttodevice") || strings.Contains(l, "htod") || strings.Contains(l, "hosttoarray") || strings.Contains(l, "htoa"):
		return model.MemHtoD
	case strings.Contains(l, "devicetohost") || strings.Contains(l, "dtoh") || strings.Contains(l, "arraytohost") || strings.Contains(l, "atoh"):
		return model.MemDtoH
	case strings.Contains(l, "hosttohost") || strings.Contains(l, "htoh"):
		return model.MemHtoH
	case strings.Contains(l, "devicetodevice") || strings.Contains(l, "dtod") || strings.Contains(l, "arraytoarray") ||
		strings.Contains(l, "atoa") || strings.Contains(l, "arraytodevice") || strings.Contains(l, "atod") ||
		strings.Contains(l, "devicetoarray") || strings.Contains(l, "dtoa"):
		return model.MemDtoD
	}
	return model.MemUnknown
}

// memKindOf maps an ENUM_CUDA_MEM_KIND label (or symbol) to the model.
func memKindOf(label string) model.MemKind {
	l := strings.ToLower(label)
	switch {
	case strings.Contains(l, "pageable"):
		return model.MemPageable
	case strings.Contains(l, "pinned"):
		return model.MemPinned
	case strings.Contains(l, "managed"):
		return model.MemManaged
	case strings.Contains(l, "device"):
		return model.MemDevice
	case strings.Contains(l, "array"):
		return model.MemArray
	}
	return model.MemKindUnknown
}

// syncKindOfAPI classifies a synchronisation record by the name of the API
// call it is correlated with (syncType drifted across versions).
func syncKindOfAPI(name string) model.SyncKind {
	l := strings.ToLower(model.StripAPIVersion(name))
	switch {
	case strings.Contains(l, "streamwaitevent"):
		return model.SyncStreamWait
	case strings.Contains(l, "streamsynchronize") || strings.Contains(l, "streamquery"):
		return model.SyncStream
	case strings.Contains(l, "eventsynchronize") || strings.Contains(l, "eventquery"):
		return model.SyncOnEvent
	case strings.Contains(l, "devicesynchronize") || strings.Contains(l, "ctxsynchronize") || strings.Contains(l, "threadsynchronize"):
		return model.SyncContext
	}
	return model.SyncUnknown
}

// ncclDtypes are the dtype tokens that NCCL kernel names carry.
var ncclDtypes = map[string]bool{
	"i8": true, "u8": true, "i32": true, "u32": true, "i64": true, "u64": true,
	"f16": true, "bf16": true, "f32": true, "f64": true, "f8e4m3": true, "f8e5m2": true,
	"int8": true, "uint8": true, "int32": true, "uint32": true, "int64": true, "uint64": true,
	"half": true, "float": true, "double": true, "bfloat16": true,
}

// ncclDtypeOf returns the dtype token of a kernel name such as
// ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...) ("" if none).
func ncclDtypeOf(name string) string {
	if i := strings.IndexAny(name, "(<"); i >= 0 {
		name = name[:i]
	}
	for _, tok := range strings.Split(name, "_") {
		if ncclDtypes[strings.ToLower(tok)] {
			return strings.ToLower(tok)
		}
	}
	return ""
}

// uvmDirOf returns the direction of a unified-memory copy kind label
// ("Unified Host-to-Device", ...): the label with "Unified" removed read as
// an ordinary copy kind.
func uvmDirOf(label string) model.MemOpKind {
	l := strings.ToLower(label)
	l = strings.Replace(l, "unified", "", 1)
	l = strings.Replace(l, "uvm", "", 1)
	switch k := copyKindOf(l); k {
	case model.MemHtoD, model.MemDtoH, model.MemDtoD:
		return k
	}
	return model.MemUnknown
}

// migrationCauseOf maps CUPTI's unified-memory migration cause
// (ENUM_CUDA_UNIF_MEM_MIGRATION: 0 unknown, 1 user prefetch, 2 page fault,
// 3 speculative prefetch, 4 eviction, 5 access counters).
func migrationCauseOf(v int64) model.MigrationCause {
	if v >= 0 && v <= int64(model.MigrationAccessCounters) {
		return model.MigrationCause(v)
	}
	return model.MigrationUnknown
}
