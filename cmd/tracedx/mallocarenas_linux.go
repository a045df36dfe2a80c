//go:build linux && cgo

package main

/*
#include <malloc.h>

// Caps glibc's malloc arenas. Each thread that calls malloc (SQLite runs on
// many) gets an arena that reserves 64 MiB of address space: eight of them
// took a quarter of a 2 GB `ulimit -v` before the trace was read, and the Go
// runtime then died on an allocation it could not map. SQLite's use of malloc
// is light; two arenas are enough. glibc fixes its arena limit when the
// first extra arena is made, which the Go runtime's threads do before any Go
// init function runs: this is a constructor, run when the program is loaded.
__attribute__((constructor)) static void tracedx_cap_arenas(void) {
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, 2);
#endif
}
*/
import "C"
