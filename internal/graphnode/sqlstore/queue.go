package sqlstore

import (
	"context"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// A backfill's SQLite writes (each entity version's insert, the close of
// the one before, the block row) were a third of the indexer's work on the
// goroutine that runs the mappings, which waited for them block after
// block. Staging now hands a block's writes to one writer goroutine per
// store, which runs them in order in the open batch while the mappings go
// on with the next blocks: the two run on two cores. The entities a block
// wrote are visible at once to the blocks after it, through pending (the
// staged versions not yet in the batch, read before the cache and the
// database) and the cache; Flush, and everything else that touches the
// batch, first waits for the queue to empty. A write that fails is kept
// (failed) and returned by the next Stage or Flush, and the batch is then
// rolled back as a failed commit is.

// queueDepth is how many staged blocks may wait for the writer: enough to
// smooth a block of many writes, and a bound on what pending holds.
const queueDepth = 64

// writes is the store's writer goroutine and its queue.
type writes struct {
	queue  chan func()
	queued sync.WaitGroup
	// pending are the versions staged and not yet written, by entity;
	// failed is the first write that failed since the last Flush or
	// Discard. Both guarded by Store.mu.
	pending map[key]*change
	failed  error
}

// enqueue runs job on the writer goroutine, after the jobs before it,
// holding st.mu; a job after a failure is skipped. The caller does not
// hold st.mu.
func (st *Store) enqueue(job func() error) error {
	st.mu.Lock()
	err := st.writes.failed
	if st.writes.queue == nil {
		st.writes.queue = make(chan func(), queueDepth)
		go run(st.writes.queue)
	}
	q := st.writes.queue
	st.mu.Unlock()
	if err != nil {
		return err
	}
	st.writes.queued.Add(1)
	q <- func() {
		defer st.writes.queued.Done()
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.writes.failed == nil {
			st.writes.failed = job()
		}
	}
	return nil
}

func run(queue <-chan func()) {
	for job := range queue {
		job()
	}
}

// drain waits until every staged write has run. The caller does not hold
// st.mu.
func (st *Store) drain() { st.writes.queued.Wait() }

// stop ends the writer goroutine once drained (Close).
func (st *Store) stop() {
	st.drain()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.writes.queue != nil {
		close(st.writes.queue)
		st.writes.queue = nil
	}
}

// stage makes a block's changes visible to the blocks after it and queues
// their writes. The caller does not hold st.mu.
func (st *Store) stage(blk graphnode.Block, changes map[key]*change, keys []key, created []DataSource) error {
	st.mu.Lock()
	if err := st.writes.failed; err != nil {
		st.mu.Unlock()
		return err
	}
	if st.writes.pending == nil {
		st.writes.pending = map[key]*change{}
	}
	staged := make([]*change, len(keys))
	for i, k := range keys {
		c := changes[k]
		staged[i] = &change{entity: c.entity, inserted: c.inserted, stored: c.entity != nil, lower: blk.Number}
		st.writes.pending[k] = staged[i]
		st.cache.put(k, staged[i])
		st.known.add(k)
	}
	st.mu.Unlock()
	return st.enqueue(func() error {
		err := st.applyBlock(context.Background(), blk, changes, keys, created)
		for i, k := range keys {
			if st.writes.pending[k] == staged[i] {
				delete(st.writes.pending, k)
			}
		}
		return err
	})
}

// forget drops what the queue's writes made visible: the batch they were
// in is not committed. The caller holds st.mu, the queue drained.
func (st *Store) forget() {
	st.cache.clear()
	st.writes.pending, st.writes.failed = nil, nil
}
