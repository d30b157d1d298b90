package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// endWithParent makes this process end (SIGTERM, as on Ctrl-C) when the
// `go run` that started it ends: go run passes a terminal's interrupt on
// through the process group, but killed any other way it left the
// sandbox running, holding its ports (as cmd/clamm-gateway's
// stopWithGoRun says). Only under go run.
func endWithParent() {
	ppid := os.Getppid()
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm")
	if ppid <= 1 || err != nil || strings.TrimSpace(string(comm)) != "go" {
		return
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0); errno == 0 && os.Getppid() != ppid {
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}

// endsWithUs makes a child process end when the sandbox does, however
// the sandbox ends.
func endsWithUs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
