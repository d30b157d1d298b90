package gateway

import (
	"context"
	"net"
)

// WriteCoalescer is a connection that can send a response's header block
// and its body in one system call. net/http writes a hit of 4 KiB or more
// in two: its 4 KiB connection buffer cannot hold both, so the headers are
// flushed on their own (writeEntry) and the body goes to the socket from
// the stored bytes. A connection that holds the header block back and
// sends it with the body (writev) saves one write, and one wake-up of the
// client, per large hit: under load a third of the kernel's work for it.
//
// The command's listener gives its connections this (cmd/clamm-gateway,
// rawconn.go); ConnContext makes it reachable from each request. Anything
// else (tests' recorders, another server) simply writes twice.
//
// A held header block can carry header lines of the caller's too
// (AddHeader): a hit's headers fixed for its entry (ETag, the block's) go
// out that way rather than through net/http's header map, which is
// cloned, sorted and scanned for newlines on every answer and outgrows
// its first group at the ninth name: on a hit that was a tenth of the
// gateway's CPU, more than the rest of its own code (BENCHMARKS.md).
type WriteCoalescer interface {
	// HoldNextWrite keeps the next write back until the one after it,
	// and sends both in one system call. It forgets any lines added
	// before it.
	HoldNextWrite()
	// AddHeader adds the line "name: value" to the held header block,
	// after net/http's own lines and before the blank line that ends it;
	// call it after HoldNextWrite, before the held write. A value with a
	// CR or LF is not added. With lines added, writes are held until
	// the block's blank line (a block past net/http's 4 KiB buffer comes
	// in pieces); held bytes that are not a header block fail the write
	// (the connection is closed rather than an answer sent without its
	// lines).
	AddHeader(name, value string)
	// FlushHeld sends whatever is still held (nothing, when the body's
	// write took it along); it ends every HoldNextWrite.
	FlushHeld() error
}

type connKey struct{}

// ConnContext is an http.Server ConnContext: a connection that coalesces
// writes is put in the context of each of its requests.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if wc, ok := c.(WriteCoalescer); ok {
		return context.WithValue(ctx, connKey{}, wc)
	}
	return ctx
}

// coalescerOf returns the request's connection when it coalesces writes.
func coalescerOf(ctx context.Context) WriteCoalescer {
	wc, _ := ctx.Value(connKey{}).(WriteCoalescer)
	return wc
}
