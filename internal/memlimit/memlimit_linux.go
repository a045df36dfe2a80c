package memlimit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// available is the physical memory, or the cgroup v2 limit of the process
// when that is lower (containers, CI runners, Slurm jobs).
func available() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	total := int64(si.Totalram) * int64(si.Unit)
	if c := cgroupLimit(); c > 0 && (total <= 0 || c < total) {
		total = c
	}
	return total
}

// cgroupLimit reads memory.max of the process's cgroup v2 ("max" or no file:
// no limit, 0).
func cgroupLimit() int64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		path, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		m, err := os.ReadFile("/sys/fs/cgroup" + strings.TrimSpace(path) + "/memory.max")
		if err != nil {
			return 0
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(m)), 10, 64)
		if err != nil {
			return 0
		}
		return v
	}
	return 0
}
