//go:build !linux

package main

// stopWithGoRun does nothing outside Linux, which alone can tie a process
// to its parent's end (PR_SET_PDEATHSIG).
func stopWithGoRun() {}
