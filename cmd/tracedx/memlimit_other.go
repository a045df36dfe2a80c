//go:build !linux

package main

func physicalMemory() int64 { return 0 }
