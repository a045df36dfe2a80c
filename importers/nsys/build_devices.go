package nsys

import (
	"math"

	"github.com/tracedx/tracedx/model"
)

// Devices, processes and threads: the TARGET_INFO_* tables, PROCESSES and
// ThreadNames, and the device and thread lookups every activity table uses.

func (b *builder) addGPU(row int, r *gpuRow) {
	if r.HasCompute && r.Major == 0 {
		return // a non-NVIDIA adapter (Windows lists Intel / Microsoft Basic Render)
	}
	b.gpus = append(b.gpus, *r)
	cu := r.CuDevice
	if cu < 0 {
		cu = r.ID
	}
	b.gpuByID[r.ID] = cu
}

func (b *builder) addCUDADevice(row int, r *cudaDeviceRow) {
	if b.cudaDev == nil {
		b.cudaDev = map[[2]int64]int64{}
	}
	b.cudaDev[[2]int64{r.PID, r.CudaID}] = r.GPUID
}

func (b *builder) addThreadName(row int, r *threadNameRow) {
	b.threadNameIDs[pidOf(r.GlobalTid)<<24|tidOf(r.GlobalTid)] = r.NameID
}

func (b *builder) addProcess(row int, r *processRow) {
	pid := r.PID
	if pid < 0 {
		pid = pidOf(r.GlobalPid)
	}
	if r.Name != "" {
		b.procNames[pid] = r.Name
	}
}

// device maps a (process, CUDA ordinal) pair to the model's device id: the
// system-wide CUDA ordinal (TARGET_INFO_GPU.cuDevice) when the export maps
// per-process ordinals to GPUs (TARGET_INFO_CUDA_DEVICE), else the ordinal.
func (b *builder) device(pid, dev int64) model.DeviceID {
	l := &b.devLast
	if l.ok && l.pid == pid && l.dev == dev {
		return l.id
	}
	id := dev
	if b.cudaDev != nil {
		if g, ok := b.cudaDev[[2]int64{pid, dev}]; ok {
			if cu, ok := b.gpuByID[g]; ok && cu >= 0 && cu <= math.MaxInt32 {
				id = cu
			}
		}
	}
	d := model.DeviceID(clamp32(id))
	if d < 0 {
		d = model.NoDevice
	}
	*l = struct {
		pid, dev int64
		id       model.DeviceID
		ok       bool
	}{pid, dev, d, true}
	if d != model.NoDevice {
		b.devUsed[d] = true
	}
	return d
}

// activityDevice is device for a GPU activity row, whose device id must be
// a CUDA ordinal; false (with a warning) when it is not.
func (b *builder) activityDevice(table string, row int, pid, dev int64) (model.DeviceID, bool) {
	if dev < 0 || dev > math.MaxInt32 {
		b.warnRow(table, row, "invalid deviceId %d", dev)
		return model.NoDevice, false
	}
	return b.device(pid, dev), true
}

func (b *builder) thread(gtid int64) model.ThreadID {
	if b.hasLastTid && gtid == b.lastTid {
		return b.lastThread
	}
	th, ok := b.threads[gtid]
	if !ok {
		pid, tid := pidOf(gtid), tidOf(gtid)
		th = b.t.ThreadFor(pid, tid)
		b.threads[gtid] = th
		b.pids[pid] = true
	}
	b.lastTid, b.lastThread, b.hasLastTid = gtid, th, true
	return th
}

// ---- CUDA activity ----
