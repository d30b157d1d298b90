// Package sqlstore is the embedded indexer's entity store on disk: Graph
// Node's versioned entity store kept in one SQLite file (a table per
// entity type: layout.go), through
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
// executor (graphnode.Execute), so the answers are the emulator's; the
// executor hands each collection's read to the store (Select), which
// runs its filter, order and page in SQL over the type's indexes where
// it can say them exactly (select.go), so a page costs what it returns.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"

	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// schemaSQL creates the tables besides the entity types' (layout.go).
const schemaSQL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS blocks (
	number INTEGER PRIMARY KEY, hash TEXT NOT NULL, parent TEXT NOT NULL, timestamp INTEGER NOT NULL,
	changes INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS blocks_hash ON blocks(hash);
CREATE TABLE IF NOT EXISTS sources (
	address TEXT PRIMARY KEY, name TEXT NOT NULL, start INTEGER NOT NULL) WITHOUT ROWID;
`

// layoutVersion names the tables' layout: a store of another layout (the
// single JSON table before it) is emptied and indexed again, as a store of
// another build is.
const layoutVersion = "2: a table per entity type"

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
	// writes is the writer goroutine the blocks are staged to (queue.go).
	writes writes
	// tables are the entity types' tables, by type name.
	tables map[string]*table
	// retain is the retention (retention.go).
	retain retention
	// known are the entities staged since the store was empty
	// (known.go). Guarded by mu.
	known known
	// span is how many blocks the last batch committed spanned: a batch
	// after one longer than the retention's history holds its versions
	// (held.go). Guarded by mu.
	span uint64
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
	// journal_size_limit: the write-ahead log is cut back to 16 MiB after
	// a checkpoint, where it otherwise keeps the size of the largest
	// stretch of writes (a backfill's commit, a retention's prune).
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=auto_vacuum(incremental)&_pragma=journal_mode(wal)&_pragma=synchronous(normal)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(off)&_pragma=cache_size(-16384)" +
		"&_pragma=journal_size_limit(16777216)"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, false, err
	}
	st := &Store{db: db, schema: s, path: path, tables: layout(s)}
	reset, err := st.init(identity)
	var empty bool
	if err == nil {
		empty, err = st.empty(context.Background())
	}
	if err != nil {
		_ = db.Close()
		return nil, false, fmt.Errorf("store %s: %w", path, err)
	}
	if empty {
		st.known = newKnown()
	}
	return st, reset, nil
}

func (st *Store) init(identity string) (bool, error) {
	ctx := context.Background()
	if _, err := st.db.ExecContext(ctx, schemaSQL); err != nil {
		return false, err
	}
	have, err := st.metaValue(ctx, "identity")
	if err != nil {
		return false, err
	}
	layoutHave, err := st.metaValue(ctx, "layout")
	if err != nil {
		return false, err
	}
	if err := st.incremental(ctx); err != nil {
		return false, err
	}
	if have == identity && layoutHave == layoutVersion {
		_, err := st.db.ExecContext(ctx, ddl(st.schema, st.tables))
		return false, err
	}
	reset := have != ""
	return reset, st.tx(ctx, func(tx *sql.Tx) error {
		if err := dropEntities(ctx, tx); err != nil {
			return err
		}
		for _, q := range []string{`DELETE FROM meta`, `DELETE FROM blocks`, `DELETE FROM sources`, ddl(st.schema, st.tables)} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('identity', ?), ('layout', ?)`, identity, layoutVersion)
		return err
	})
}

// incremental makes the file give the pages the retention frees back
// (auto_vacuum incremental: retention.go runs incremental_vacuum after
// each prune), so its size is what it holds, not its high-water mark. A
// file made without it (set only before the first table) is rewritten
// once with VACUUM.
func (st *Store) incremental(ctx context.Context) error {
	var mode int
	if err := st.db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode == 2 {
		return err
	}
	_, err := st.db.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL; VACUUM`)
	return err
}

// metaValue reads a meta key ("" if absent).
func (st *Store) metaValue(ctx context.Context, k string) (string, error) {
	var v string
	err := st.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// dropEntities drops every entity table (another build's columns, or the
// earlier layout's single table).
func dropEntities(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'e\_%' ESCAPE '\' OR name = 'entities')`)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			_ = rows.Close()
			return err
		}
		names = append(names, n)
	}
	_ = rows.Close()
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP TABLE `+quote(n)); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Close commits what was staged and closes the database.
func (st *Store) Close() error {
	st.stop()
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
	if err := st.StageAdvance(ctx, b); err != nil {
		return err
	}
	return st.Flush(ctx)
}

// StageAdvance stages the pointer's move to b, a block with no changes,
// in the open batch: it commits with the next Flush.
func (st *Store) StageAdvance(ctx context.Context, b graphnode.Block) error {
	return st.enqueue(func() error {
		bt, err := st.open(context.Background())
		if err != nil {
			return err
		}
		return bt.stageBlock(context.Background(), b, false)
	})
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
	st.drain()
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
		var qs []string
		for _, name := range st.schema.TypeNames() {
			t := st.tables[name].name
			// the versions opened after to are the rows written last
			qs = append(qs, `DELETE FROM `+t+` WHERE vid > coalesce((SELECT vid FROM `+t+` WHERE lower <= ?1 ORDER BY vid DESC LIMIT 1), 0)`,
				`UPDATE `+t+` SET upper = NULL WHERE upper > ?1`)
		}
		for _, q := range append(qs, `DELETE FROM sources WHERE start > ?`, `DELETE FROM blocks WHERE number > ?`) {
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
	st.drain()
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
func (st *Store) Reset(ctx context.Context) (err error) {
	st.drain()
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.flush(); err != nil {
		return err
	}
	st.cache.clear()
	st.retain.cut, st.retain.loaded = 0, false
	st.known = known{}
	defer func() {
		if err == nil {
			st.known = newKnown()
		}
	}()
	return st.tx(ctx, func(tx *sql.Tx) error {
		qs := []string{`DELETE FROM meta WHERE key NOT IN ('identity', 'layout')`, `DELETE FROM blocks`, `DELETE FROM sources`}
		for _, name := range st.schema.TypeNames() {
			qs = append(qs, `DELETE FROM `+st.tables[name].name)
		}
		for _, q := range qs {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}
