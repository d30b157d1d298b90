package sqlstore

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// Query answers a GraphQL request as Graph Node would (QueryContext
// without a deadline).
func (st *Store) Query(req graphnode.Request) graphnode.Response {
	return st.QueryContext(context.Background(), req)
}

// QueryContext answers a GraphQL request as Graph Node would, over one
// committed state of the store (a read transaction): the emulator's
// executor reads the entities at the block the query asks, by their block
// ranges, and every read runs on ctx, so a cancelled or timed-out request
// stops reading (the query then fails with a store error).
func (st *Store) QueryContext(ctx context.Context, req graphnode.Request) graphnode.Response {
	tx, err := st.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return storeError(err)
	}
	defer func() { _ = tx.Rollback() }()
	src := &source{tx: tx, st: st}
	h, _, err := head(ctx, tx)
	if err != nil {
		return storeError(err)
	}
	src.head = h
	if src.earliest, err = earliest(ctx, tx); err != nil {
		return storeError(err)
	}
	return graphnode.ExecuteContext(ctx, st.schema, src, req)
}

func storeError(err error) graphnode.Response {
	return graphnode.Response{Errors: []graphnode.Error{{Message: "Store error: " + err.Error()}}}
}

// earliest is the oldest block whose state the store holds (retention.go).
func earliest(ctx context.Context, q queryer) (uint64, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'earliest'`).Scan(&raw)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(raw, 10, 64)
}

// source is a read transaction as the executor's Source and Selector.
type source struct {
	tx       *sql.Tx
	st       *Store
	head     graphnode.Block
	earliest uint64
	// stmts are the statements prepared in tx, by text: a page's rows
	// read their references and derived fields with a few statements
	// many times.
	stmts map[string]*sql.Stmt
}

// query runs q in the read transaction, prepared once per query.
func (s *source) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if traceRead != nil {
		traceRead(q, args)
	}
	stmt := s.stmts[q]
	if stmt == nil {
		var err error
		if stmt, err = s.tx.PrepareContext(ctx, q); err != nil {
			return nil, err
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts[q] = stmt
	}
	return stmt.QueryContext(ctx, args...)
}

// read runs q, which selects tb.list, and reads its versions.
func (s *source) read(ctx context.Context, tb *table, q string, args ...any) ([]version, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanVersions(rows, tb)
}

func (s *source) Head() graphnode.Block { return s.head }
func (s *source) Earliest() uint64      { return s.earliest }

// Failed is false: a mapping error stops indexing before the failing
// block, and Graph Node's _meta says hasIndexingErrors only for blocks at
// or after the first failed one, which such a store never reaches (the
// failure is reported by the indexer's status, /readyz).
func (s *source) Failed() bool { return false }

func (s *source) BlockAt(ctx context.Context, n uint64) (graphnode.Block, bool) {
	b, ok, err := blockAt(ctx, s.tx, n)
	if err != nil {
		return graphnode.Block{Number: n}, false
	}
	return b, ok
}

func (s *source) BlockByHash(ctx context.Context, hash string) (graphnode.Block, bool) {
	var n, ts int64
	var b graphnode.Block
	err := s.tx.QueryRowContext(ctx, `SELECT number, hash, parent, timestamp FROM blocks WHERE hash = ?`, hash).Scan(&n, &b.Hash, &b.ParentHash, &ts)
	if err != nil {
		return graphnode.Block{}, false
	}
	b.Number, b.Timestamp = uint64(n), uint64(ts)
	return b, true
}

// Rows reads every entity of a type valid at block n: what the executor
// falls back to where a selection cannot be narrowed.
func (s *source) Rows(ctx context.Context, typ string, n uint64) ([]graphnode.Row, error) {
	tb := s.st.tables[typ]
	rows, err := s.query(ctx, `SELECT `+tb.list+` FROM `+tb.name+` WHERE lower <= ?1 AND (upper IS NULL OR upper > ?1) ORDER BY id`, int64(n))
	if err != nil {
		return nil, err
	}
	return scanRows(rows, tb)
}

func (s *source) At(ctx context.Context, typ, id string, n uint64) (graphnode.Entity, error) {
	tb := s.st.tables[typ]
	vs, err := s.read(ctx, tb, tb.atSQL(), tb.idArg(id), int64(n))
	if err != nil || len(vs) == 0 || vs[0].upperSet && vs[0].upper <= n {
		return nil, err
	}
	return vs[0].Entity, nil
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
	var out []Version
	for _, name := range st.schema.TypeNames() {
		tb := st.tables[name]
		rows, err := st.db.QueryContext(ctx, `SELECT `+tb.list+` FROM `+tb.name+` ORDER BY id, lower`)
		if err != nil {
			return nil, err
		}
		vs, err := scanVersions(rows, tb)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			raw, err := graphnode.EncodeEntity(v.Entity)
			if err != nil {
				return nil, err
			}
			out = append(out, Version{Type: name, ID: v.ID, Lower: v.Changed, Upper: v.upper, Data: string(raw)})
		}
	}
	return out, nil
}
