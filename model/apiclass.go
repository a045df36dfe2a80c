package model

import "strings"

// ClassifyAPI classifies a CUDA / HIP runtime or driver API name (with any
// "_vNNNNN" version suffix already stripped, or not) into an APIClass.
func ClassifyAPI(name string) APIClass {
	n := StripAPIVersion(name)
	l := strings.ToLower(n)
	switch {
	case strings.Contains(l, "graphlaunch"):
		return APIGraphLaunch
	case strings.Contains(l, "launchkernel") || strings.Contains(l, "launchcooperativekernel") ||
		strings.HasPrefix(l, "culaunch") || strings.HasPrefix(l, "cudalaunch") || strings.HasPrefix(l, "hiplaunch") ||
		strings.HasPrefix(l, "hipextlaunch") || strings.HasPrefix(l, "hipmodulelaunch") || strings.HasPrefix(l, "hipextmodulelaunch"):
		return APILaunch
	case strings.Contains(l, "synchronize"):
		return APISync
	case strings.Contains(l, "memset"):
		return APIMemset
	case strings.Contains(l, "memcpy") || strings.Contains(l, "memprefetch"):
		return APIMemcpy
	case strings.Contains(l, "malloc") || strings.Contains(l, "free") || strings.Contains(l, "hostalloc") ||
		strings.Contains(l, "memalloc") || strings.Contains(l, "hostregister") || strings.Contains(l, "hostunregister") ||
		strings.Contains(l, "mempool") || strings.Contains(l, "memcreate") || strings.Contains(l, "memmap") ||
		strings.Contains(l, "memunmap") || strings.Contains(l, "memrelease") || strings.Contains(l, "memaddressreserve"):
		return APIAlloc
	}
	return APIOther
}

// IsSyncMemcpyAPI reports whether a memcpy API name is the synchronous
// (non-Async) form, which blocks the calling thread.
func IsSyncMemcpyAPI(name string) bool {
	n := strings.ToLower(StripAPIVersion(name))
	return (strings.Contains(n, "memcpy") || strings.Contains(n, "memset")) && !strings.Contains(n, "async")
}

// StripAPIVersion removes a trailing "_vNNNN" / "_ptds" / "_ptsz" suffix as
// CUPTI records it (cudaLaunchKernel_v7000 → cudaLaunchKernel).
func StripAPIVersion(name string) string {
	for {
		i := strings.LastIndexByte(name, '_')
		if i <= 0 {
			return name
		}
		suf := name[i+1:]
		if suf == "ptds" || suf == "ptsz" || (len(suf) > 1 && suf[0] == 'v' && allDigits(suf[1:])) {
			name = name[:i]
			continue
		}
		return name
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
