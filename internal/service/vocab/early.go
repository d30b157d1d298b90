package vocab

import "context"

// early is a read begun before its answer knows whether it needs it, so
// that it costs no round trip of its own when it does (the head beside an
// LP prepare's reads, the owners' delegates beside the valuation of
// expiring options). It belongs to its request: the caller ends it (end)
// before it returns, so no read of an answer already sent reaches an
// upstream afterwards.
type Early[T any] struct {
	done   chan struct{}
	cancel context.CancelFunc
	v      T
	err    error
}

// begin starts read on its own goroutine under a context end cancels.
func Begin[T any](ctx context.Context, read func(context.Context) (T, error)) *Early[T] {
	ctx, cancel := context.WithCancel(ctx)
	e := &Early[T]{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(e.done)
		e.v, e.err = read(ctx)
	}()
	return e
}

// wait is the read's result once it has ended, or ctx's error first.
func (e *Early[T]) Wait(ctx context.Context) (T, error) {
	select {
	case <-e.done:
		return e.v, e.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// end stops the read if it still runs and returns once it has.
func (e *Early[T]) End() {
	e.cancel()
	<-e.done
}
