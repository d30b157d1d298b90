package main

import (
	"bufio"
	"io"
	"sync"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// logWriter buffers log lines and flushes them every interval (and when the
// buffer fills, and at close): one write system call per access-log line
// was a fifth of a cache hit's cost under load. At most one interval of
// lines is lost if the process dies without closing it.
type logWriter struct {
	mu   sync.Mutex
	w    *bufio.Writer
	stop chan struct{}
	done chan struct{}
}

func newLogWriter(w io.Writer, interval time.Duration) *logWriter {
	l := &logWriter{w: bufio.NewWriterSize(w, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				l.flush()
			case <-l.stop:
				l.flush()
				return
			}
		}
	}()
	return l
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// AppendLine formats one line straight into the buffer (gateway's
// LineAppender), flushing first when less than a long line's room is left.
func (l *logWriter) AppendLine(line gateway.LogLine) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Available() < 1024 {
		_ = l.w.Flush()
	}
	_, _ = l.w.Write(line.AppendLogLine(l.w.AvailableBuffer()))
}

func (l *logWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.w.Flush()
}

// Close flushes what is buffered and stops the flusher.
func (l *logWriter) Close() error {
	close(l.stop)
	<-l.done
	return nil
}
