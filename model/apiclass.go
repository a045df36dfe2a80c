package model

import "strings"

// ClassifyAPI classifies a CUDA / HIP runtime or driver API name (with or
// without a "_vNNNNN" version suffix) into an APIClass. Families are matched
// by prefix after the API's own prefix (cuda, cu, hip), so that for example
// cuMemSetAccess (virtual memory management) is an allocation call, not a
// memset.
func ClassifyAPI(name string) APIClass {
	l := strings.ToLower(StripAPIVersion(name))
	var rest string
	switch {
	case strings.HasPrefix(l, "cuda"):
		rest = l[4:]
	case strings.HasPrefix(l, "hipext"):
		rest = l[6:]
	case strings.HasPrefix(l, "hip"):
		rest = l[3:]
	case strings.HasPrefix(l, "cu"):
		rest = l[2:]
	default:
		rest = l
	}
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(rest, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("graphlaunch"):
		return APIGraphLaunch
	case has("launch", "modulelaunch", "extlaunch") || strings.Contains(rest, "launchkernel"):
		return APILaunch
	case strings.HasSuffix(rest, "synchronize"):
		return APISync
	case has("memset") && !has("memsetaccess"):
		return APIMemset
	case has("memcpy", "memprefetch"):
		return APIMemcpy
	case has("malloc", "free", "hostalloc", "memalloc", "memfree", "hostregister", "hostunregister", "mempool",
		"memcreate", "memmap", "memunmap", "memrelease", "memaddressreserve", "memaddressfree", "memsetaccess",
		"arraycreate", "array3dcreate", "extmallocwithflags"):
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
