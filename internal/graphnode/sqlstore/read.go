package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// Query answers a GraphQL request as Graph Node would, over one committed
// state of the store (a read transaction): the emulator's executor reads
// the entities at the block the query asks, by their block ranges.
func (st *Store) Query(req graphnode.Request) graphnode.Response {
	ctx := context.Background()
	tx, err := st.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storeError(err)
	}
	defer func() { _ = tx.Rollback() }()
	src := &source{ctx: ctx, tx: tx, schema: st.schema}
	h, _, err := head(ctx, tx)
	if err != nil {
		return storeError(err)
	}
	src.head = h
	return graphnode.Execute(st.schema, src, req)
}

func storeError(err error) graphnode.Response {
	return graphnode.Response{Errors: []graphnode.Error{{Message: "Store error: " + err.Error()}}}
}

// source is a read transaction as the executor's Source.
type source struct {
	ctx    context.Context
	tx     *sql.Tx
	schema *graphnode.Schema
	head   graphnode.Block
}

func (s *source) Head() graphnode.Block { return s.head }

// Failed is false: a mapping error stops indexing before the failing
// block, and Graph Node's _meta says hasIndexingErrors only for blocks at
// or after the first failed one, which such a store never reaches (the
// failure is reported by the indexer's status, /readyz).
func (s *source) Failed() bool { return false }

func (s *source) BlockAt(n uint64) (graphnode.Block, bool) {
	b, ok, err := blockAt(s.ctx, s.tx, n)
	if err != nil {
		return graphnode.Block{Number: n}, false
	}
	return b, ok
}

func (s *source) BlockByHash(hash string) (graphnode.Block, bool) {
	var n, ts int64
	var b graphnode.Block
	err := s.tx.QueryRowContext(s.ctx, `SELECT number, hash, parent, timestamp FROM blocks WHERE hash = ?`, hash).Scan(&n, &b.Hash, &b.ParentHash, &ts)
	if err != nil {
		return graphnode.Block{}, false
	}
	b.Number, b.Timestamp = uint64(n), uint64(ts)
	return b, true
}

func (s *source) Rows(typ string, n uint64) ([]graphnode.Row, error) {
	rows, err := s.tx.QueryContext(s.ctx, `SELECT id, lower, data FROM entities WHERE type = ? AND lower <= ? AND upper > ? ORDER BY id`,
		typ, int64(n), int64(n))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []graphnode.Row
	for rows.Next() {
		var id string
		var lower int64
		var raw []byte
		if err := rows.Scan(&id, &lower, &raw); err != nil {
			return nil, err
		}
		e, err := s.schema.DecodeEntity(typ, raw)
		if err != nil {
			return nil, fmt.Errorf("%s[%s]: %w", typ, id, err)
		}
		out = append(out, graphnode.Row{ID: id, Entity: e, Changed: uint64(lower)})
	}
	return out, rows.Err()
}

func (s *source) At(typ, id string, n uint64) (graphnode.Entity, error) {
	var raw []byte
	err := s.tx.QueryRowContext(s.ctx, `SELECT data FROM entities WHERE type = ? AND id = ? AND lower <= ? AND upper > ?`,
		typ, id, int64(n), int64(n)).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.schema.DecodeEntity(typ, raw)
}

// Version is one stored entity version with its block range (Upper 0:
// still valid).
type Version struct {
	Type, ID     string
	Lower, Upper uint64
	Data         string
}

// Dump lists every entity version, ordered by type, id and lower block:
// two stores that hold the same history dump the same.
func (st *Store) Dump(ctx context.Context) ([]Version, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT type, id, lower, upper, data FROM entities ORDER BY type, id, lower`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		var lower, upper int64
		var raw []byte
		if err := rows.Scan(&v.Type, &v.ID, &lower, &upper, &raw); err != nil {
			return nil, err
		}
		v.Lower, v.Data = uint64(lower), string(raw)
		if upper != open {
			v.Upper = uint64(upper)
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
