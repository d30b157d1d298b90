package indexer

import (
	"errors"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
)

// retryable is the mappings' Store for one block: the block's own Writer,
// passed with the block (mapping.Subgraph.BlockTo), with the database's
// own failures marked retryable (mapping.StoreError: the block is indexed
// again after a pause, where a mapping's error stops indexing).
type retryable struct{ w *sqlstore.Writer }

func (b retryable) Schema() *graphnode.Schema { return b.w.Schema() }

func (b retryable) Get(typ, id string) (graphnode.Entity, error) {
	e, err := b.w.Get(typ, id)
	return e, retryableStore(err)
}

func (b retryable) Set(typ, id string, data graphnode.Entity, block uint64) error {
	return retryableStore(b.w.Set(typ, id, data, block))
}

func (b retryable) Remove(typ, id string, block uint64) error {
	return retryableStore(b.w.Remove(typ, id, block))
}

func retryableStore(err error) error {
	var se *sqlstore.Error
	if errors.As(err, &se) {
		return &mapping.StoreError{Err: err}
	}
	return err
}
