package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// stopWithGoRun makes the server stop (SIGTERM, so it shuts down as on
// Ctrl-C) when the `go run` that started it ends. `go run` passes an
// interrupt from the terminal to its child through the process group, but
// when it is ended any other way (an editor's stop button, `kill` of the go
// process) the child was left listening on its port, and the next `go run`
// failed to bind. Only under `go run`: a gateway started by a shell or a
// supervisor that later exits keeps running, as a daemon should.
func stopWithGoRun() {
	ppid := os.Getppid()
	if !startedByGo(ppid, os.ReadFile) {
		return
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno != 0 {
		return
	}
	// The parent may have ended before the request took effect.
	if os.Getppid() != ppid {
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}

// startedByGo tells whether process ppid is the go command (`go run`),
// from its name in /proc.
func startedByGo(ppid int, readFile func(string) ([]byte, error)) bool {
	if ppid <= 1 {
		return false
	}
	comm, err := readFile("/proc/" + strconv.Itoa(ppid) + "/comm")
	return err == nil && strings.TrimSpace(string(comm)) == "go"
}
