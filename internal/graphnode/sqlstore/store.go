// Package sqlstore is the embedded indexer's entity store on disk: Graph
// Node's versioned entity store kept in one SQLite file, through
// github.com/ncruces/go-sqlite3 (SQLite compiled to WebAssembly and
// translated to Go: no cgo, no server, the real SQLite with its
// transactions and write-ahead log).
//
// As in Graph Node's PostgreSQL store, every entity version carries the
// block range it is valid in, [lower, upper): a write at block b closes the
// open version at b and opens a new one, so a query reads the state as of
// any block (`block:` arguments, the API's block parameter) and a reorg
// reverts by deleting the versions opened after the common ancestor and
// reopening those closed after it. Each block's changes, the data sources
// it created and the block pointer commit in one transaction: a crash
// leaves the store at the last block committed, and a restart resumes from
// there. Queries run in read transactions (WAL: readers see one committed
// state and never wait for the writer), through the Graph Node emulator's
// executor (graphnode.Execute), so the answers are the emulator's.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"sync"

	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// open is the upper bound of a version that is still valid.
const open = math.MaxInt64

// schemaSQL creates the tables; a store made by another build of the
// subgraph (another Identity) is emptied and indexed again.
const schemaSQL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (
	number INTEGER PRIMARY KEY, hash TEXT NOT NULL, parent TEXT NOT NULL, timestamp INTEGER NOT NULL,
	changes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS blocks_hash ON blocks(hash);
CREATE TABLE IF NOT EXISTS entities (
	type TEXT NOT NULL, id TEXT NOT NULL, lower INTEGER NOT NULL, upper INTEGER NOT NULL, data BLOB NOT NULL,
	PRIMARY KEY (type, id, lower)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entities_lower ON entities(lower);
CREATE TABLE IF NOT EXISTS sources (
	address TEXT PRIMARY KEY, name TEXT NOT NULL, start INTEGER NOT NULL) WITHOUT ROWID;
`

// Store is one subgraph's entities, blocks and dynamic data sources on disk.
type Store struct {
	db     *sql.DB
	schema *graphnode.Schema
	path   string
	// mu serialises the writer (one block at a time) against Revert; it
	// guards the open batch and the cache.
	mu    sync.Mutex
	batch *batch
	cache entityCache
}

// DataSource is a data source the mappings created: its address (0x-hex),
// the template it runs and the block it was created in.
type DataSource struct {
	Address string
	Name    string
	Start   uint64
}

// Open opens (or creates) the store at path for the subgraph whose schema
// is s and whose build is identity (a digest of the schema and the
// manifest): a store another build wrote is emptied, since its entities
// are not what this build's mappings write, and the second result says so.
func Open(path string, s *graphnode.Schema, identity string) (*Store, bool, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(off)&_pragma=cache_size(-16384)"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, false, err
	}
	st := &Store{db: db, schema: s, path: path}
	reset, err := st.init(identity)
	if err != nil {
		_ = db.Close()
		return nil, false, fmt.Errorf("store %s: %w", path, err)
	}
	return st, reset, nil
}

func (st *Store) init(identity string) (bool, error) {
	ctx := context.Background()
	if _, err := st.db.ExecContext(ctx, schemaSQL); err != nil {
		return false, err
	}
	var have string
	err := st.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'identity'`).Scan(&have)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	if have == identity {
		return false, nil
	}
	reset := have != ""
	return reset, st.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM meta`, `DELETE FROM blocks`, `DELETE FROM entities`, `DELETE FROM sources`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('identity', ?)`, identity)
		return err
	})
}

// Close commits what was staged and closes the database.
func (st *Store) Close() error {
	st.mu.Lock()
	err := st.flush()
	st.mu.Unlock()
	return errors.Join(err, st.db.Close())
}

// Schema is the schema the store checks entities against.
func (st *Store) Schema() *graphnode.Schema { return st.schema }

// tx runs f in a write transaction.
func (st *Store) tx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// Head is the last block committed; ok is false before the first.
func (st *Store) Head(ctx context.Context) (graphnode.Block, bool, error) {
	return head(ctx, st.db)
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func head(ctx context.Context, q queryer) (graphnode.Block, bool, error) {
	var raw string
	err := q.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'head'`).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return graphnode.Block{}, false, nil
	}
	if err != nil {
		return graphnode.Block{}, false, err
	}
	var b graphnode.Block
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return graphnode.Block{}, false, fmt.Errorf("head pointer: %w", err)
	}
	return b, true, nil
}

// The statements that move the pointer and record a block.
const (
	setHeadSQL  = `INSERT INTO meta(key, value) VALUES ('head', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`
	setBlockSQL = `INSERT INTO blocks(number, hash, parent, timestamp, changes) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(number) DO UPDATE SET hash = excluded.hash, parent = excluded.parent, timestamp = excluded.timestamp,
		changes = max(blocks.changes, excluded.changes)`
)

// execer runs a statement: a transaction, or one of its prepared
// statements' owner.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// setHead writes the block pointer and the block, in tx.
func setHead(ctx context.Context, tx execer, b graphnode.Block, changes bool) error {
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, setHeadSQL, string(raw)); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, setBlockSQL, int64(b.Number), b.Hash, b.ParentHash, int64(b.Timestamp), flag(changes))
	return err
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Advance moves the block pointer to b, a block with no changes (the end
// of a range of blocks none of whose logs the data sources handle).
func (st *Store) Advance(ctx context.Context, b graphnode.Block) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	bt, err := st.open(ctx)
	if err != nil {
		return err
	}
	if err := bt.stageBlock(ctx, b, false); err != nil {
		return err
	}
	return st.flush()
}

// Block returns the hash of block n as indexed, if the store holds it.
func (st *Store) Block(ctx context.Context, n uint64) (graphnode.Block, bool, error) {
	return blockAt(ctx, st.db, n)
}

func blockAt(ctx context.Context, q queryer, n uint64) (graphnode.Block, bool, error) {
	b := graphnode.Block{Number: n}
	var ts int64
	err := q.QueryRowContext(ctx, `SELECT hash, parent, timestamp FROM blocks WHERE number = ?`, int64(n)).Scan(&b.Hash, &b.ParentHash, &ts)
	if errors.Is(err, sql.ErrNoRows) {
		return graphnode.Block{Number: n}, false, nil
	}
	b.Timestamp = uint64(ts)
	return b, err == nil, err
}

// Sources are the data sources the mappings created, in creation order.
func (st *Store) Sources(ctx context.Context) ([]DataSource, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT address, name, start FROM sources ORDER BY start, address`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []DataSource
	for rows.Next() {
		var d DataSource
		var start int64
		if err := rows.Scan(&d.Address, &d.Name, &start); err != nil {
			return nil, err
		}
		d.Start = uint64(start)
		out = append(out, d)
	}
	return out, rows.Err()
}

// Revert undoes every block after to (a reorg's common ancestor): the
// versions they opened are deleted, those they closed reopened, their
// data sources and blocks forgotten, and the pointer set to block to,
// which the store must hold.
func (st *Store) Revert(ctx context.Context, to uint64) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	b, ok, err := blockAt(ctx, st.db, to)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("revert to block %d, which the store does not hold", to)
	}
	if err := st.flush(); err != nil {
		return err
	}
	st.cache.clear()
	return st.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`DELETE FROM entities WHERE lower > ?`,
			`UPDATE entities SET upper = ` + fmt.Sprint(int64(open)) + ` WHERE upper > ? AND upper < ` + fmt.Sprint(int64(open)),
			`DELETE FROM sources WHERE start > ?`,
			`DELETE FROM blocks WHERE number > ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, int64(to)); err != nil {
				return err
			}
		}
		return setHead(ctx, tx, b, false)
	})
}

// Prune forgets the blocks before `before` that changed nothing: the
// follower records every block near the head to detect reorgs, which a
// store has no need of once they are final. Blocks with changes stay, so
// `block: {hash}` finds every block an entity version starts at.
func (st *Store) Prune(ctx context.Context, before uint64) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.flush(); err != nil {
		return err
	}
	_, err := st.db.ExecContext(ctx, `DELETE FROM blocks WHERE number < ? AND changes = 0
		AND number <> (SELECT json_extract(value, '$.number') FROM meta WHERE key = 'head')`, int64(before))
	return err
}

// Size is the store's size on disk in bytes (the database and its
// write-ahead log).
func (st *Store) Size() int64 {
	var n int64
	for _, p := range []string{st.path, st.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Blocks lists the blocks the store holds at or below n, newest first, at
// most limit: where a reorg's common ancestor is looked for.
func (st *Store) Blocks(ctx context.Context, n uint64, limit int) ([]graphnode.Block, error) {
	rows, err := st.db.QueryContext(ctx, `SELECT number, hash, parent, timestamp FROM blocks WHERE number <= ? ORDER BY number DESC LIMIT ?`, int64(n), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []graphnode.Block
	for rows.Next() {
		var b graphnode.Block
		var num, ts int64
		if err := rows.Scan(&num, &b.Hash, &b.ParentHash, &ts); err != nil {
			return nil, err
		}
		b.Number, b.Timestamp = uint64(num), uint64(ts)
		out = append(out, b)
	}
	return out, rows.Err()
}

// Reset empties the store but for its identity: a reorg deeper than every
// block it holds is indexed again from the start.
func (st *Store) Reset(ctx context.Context) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.flush(); err != nil {
		return err
	}
	st.cache.clear()
	return st.tx(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM meta WHERE key <> 'identity'`, `DELETE FROM blocks`, `DELETE FROM entities`, `DELETE FROM sources`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}
