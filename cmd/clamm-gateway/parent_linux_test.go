package main

import (
	"errors"
	"os"
	"testing"
)

// Only the go command counts as `go run`'s parent: a shell, a supervisor or
// init leave the server running when they end.
func TestStartedByGo(t *testing.T) {
	comm := map[string]string{"/proc/42/comm": "go\n", "/proc/43/comm": "bash\n", "/proc/44/comm": "gopls\n"}
	read := func(p string) ([]byte, error) {
		if c, ok := comm[p]; ok {
			return []byte(c), nil
		}
		return nil, errors.New("no such process")
	}
	for ppid, want := range map[int]bool{42: true, 43: false, 44: false, 45: false, 1: false, 0: false} {
		if got := startedByGo(ppid, read); got != want {
			t.Errorf("startedByGo(%d) = %v, want %v", ppid, got, want)
		}
	}
	// This test binary's parent is the go command under `go test`.
	if !startedByGo(os.Getppid(), os.ReadFile) {
		t.Log("parent is not the go command (the test binary was run directly)")
	}
}
