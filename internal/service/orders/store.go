package orders

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	_ "github.com/jackc/pgx/v5/stdlib"       // registers "pgx"
	_ "github.com/ncruces/go-sqlite3/driver" // registers "sqlite3"
)

// Record is one order as the book keeps it: the signed order and what
// the book learnt of it. Closed is set once the contract's events say the
// order was filled or cancelled (then nothing about it changes again).
type Record struct {
	ChainID  uint64
	Hash     common.Hash // the struct hash: the contract's key of the order
	Contract common.Address
	Kind     Kind
	Maker    common.Address
	Market   common.Address
	TokenID  string // decimal; empty for a limit purchase
	Body     []byte // the order as accepted (SignedOrder JSON)
	// AcceptedAt is the acceptance's block time, AcceptedBlock its
	// number: fills and cancels are looked for from there on.
	AcceptedAt    int64
	AcceptedBlock uint64
	// Deadline is the order's deadline (clamped to int64): past it the
	// order can no longer fill, so it no longer counts against its
	// maker's bound.
	Deadline int64
	Closed   []byte // Closure JSON; nil while the chain has not closed it
}

// clampDeadline is a uint256 deadline as the store's BIGINT column.
func clampDeadline(d *big.Int) int64 {
	if d == nil || !d.IsInt64() {
		return math.MaxInt64
	}
	return d.Int64()
}

// Filter selects records of one chain: a maker's, or a market's (and of
// one option when TokenID is set). OpenOnly leaves out closed ones.
type Filter struct {
	ChainID  uint64
	Maker    *common.Address
	Market   *common.Address
	TokenID  string
	OpenOnly bool
	Limit    int
}

// ErrMakerFull is Insert's refusal of a maker who already has the
// bound's number of live orders: not closed, and whose deadline is not
// before the new order's acceptance time.
var ErrMakerFull = errors.New("the maker has as many open orders as the book keeps per maker")

// Repository is the book's durable store: SQLite embedded by default,
// PostgreSQL where several replicas share one book. Both are the same SQL
// (Open), so they behave alike; an Insert returns only once committed.
type Repository interface {
	// Insert stores r unless the book holds its (chain, hash) already, in
	// which case it returns the stored record and false; ErrMakerFull when
	// the maker has maxPerMaker live orders on the chain (not closed, and
	// not past their deadline at r.AcceptedAt).
	Insert(ctx context.Context, r Record, maxPerMaker int) (Record, bool, error)
	Get(ctx context.Context, chainID uint64, hash common.Hash) (Record, bool, error)
	List(ctx context.Context, f Filter) ([]Record, error)
	// Close records how the chain closed an order (once: a second Close
	// of the same order changes nothing).
	Close(ctx context.Context, chainID uint64, hash common.Hash, closure []byte) error
	Count(ctx context.Context) (int, error)
	Shutdown() error
}

// migrations are the schema's steps, applied in order, each once, in one
// transaction with its version row: the one migration path of both
// databases. A step is SQL, or Go over the transaction where the two
// databases' SQL differs (reading the stored JSON).
var migrations = []migration{
	{sql: `CREATE TABLE limit_orders (
		chain_id BIGINT NOT NULL,
		hash TEXT NOT NULL,
		contract TEXT NOT NULL,
		kind TEXT NOT NULL,
		maker TEXT NOT NULL,
		market TEXT NOT NULL,
		token_id TEXT NOT NULL,
		body TEXT NOT NULL,
		accepted_at BIGINT NOT NULL,
		accepted_block BIGINT NOT NULL,
		closed TEXT,
		PRIMARY KEY (chain_id, hash)
	)`},
	{sql: `CREATE INDEX limit_orders_maker ON limit_orders (chain_id, maker)`},
	{sql: `CREATE INDEX limit_orders_option ON limit_orders (chain_id, market, token_id)`},
	// The deadline, so the per-maker bound counts only live orders; the
	// orders stored before it get theirs from their body.
	{sql: `ALTER TABLE limit_orders ADD COLUMN deadline BIGINT NOT NULL DEFAULT ` + strconv.FormatInt(math.MaxInt64, 10)},
	{run: backfillDeadlines},
}

// migration is one step: sql, or run.
type migration struct {
	sql string
	run func(ctx context.Context, r *sqlRepo, tx *sql.Tx) error
}

// backfillDeadlines sets each stored order's deadline from its body.
func backfillDeadlines(ctx context.Context, r *sqlRepo, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT chain_id, hash, body FROM limit_orders`)
	if err != nil {
		return err
	}
	type row struct {
		chain    int64
		hash     string
		deadline int64
	}
	var todo []row
	for rows.Next() {
		var x row
		var body string
		if err := rows.Scan(&x.chain, &x.hash, &body); err != nil {
			_ = rows.Close()
			return err
		}
		var so SignedOrder
		if json.Unmarshal([]byte(body), &so) != nil {
			continue // unreadable: counted as live, as before the column
		}
		x.deadline = clampDeadline(so.Deadline.Int)
		todo = append(todo, x)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, x := range todo {
		if _, err := tx.ExecContext(ctx, r.q(`UPDATE limit_orders SET deadline = ? WHERE chain_id = ? AND hash = ?`), x.deadline, x.chain, x.hash); err != nil {
			return err
		}
	}
	return nil
}

// sqlRepo is Repository over database/sql, for SQLite and PostgreSQL.
type sqlRepo struct {
	db       *sql.DB
	postgres bool
}

// OpenSQLite opens (creating it) the book at path: WAL and synchronous
// FULL, so an order answered 2xx is on disk before the answer, and one
// connection, so the per-maker bound is checked and kept in one writer.
// ctx bounds the open and the migrations.
func OpenSQLite(ctx context.Context, path string) (Repository, error) {
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() +
		"?_pragma=journal_mode(wal)&_pragma=synchronous(full)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return migrate(ctx, db, false)
}

// OpenPostgres opens the book in the PostgreSQL database at url
// (CLAMM_ORDERS_DATABASE_URL): replicas sharing it serve one book; the
// per-maker bound holds across them by a transaction-scoped advisory lock
// per maker. ctx bounds the connection and the migrations.
func OpenPostgres(ctx context.Context, dsn string) (Repository, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	return migrate(ctx, db, true)
}

func migrate(ctx context.Context, db *sql.DB, postgres bool) (Repository, error) {
	r := &sqlRepo{db: db, postgres: postgres}
	if err := r.applyMigrations(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("orders: migrate: %w", err)
	}
	return r, nil
}

// applyMigrations runs the steps not yet applied, all in one
// transaction: PostgreSQL's DDL is transactional, and replicas starting
// together queue on an advisory lock taken first, so one migrates and the
// others find the steps done.
func (r *sqlRepo) applyMigrations(ctx context.Context) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if r.postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7251051)`); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS limit_orders_migrations (version BIGINT PRIMARY KEY)`); err != nil {
		return err
	}
	for v, step := range migrations {
		var n int
		if err := tx.QueryRowContext(ctx, r.q(`SELECT COUNT(*) FROM limit_orders_migrations WHERE version = ?`), v).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		if err := r.apply(ctx, tx, step); err != nil {
			return fmt.Errorf("step %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, r.q(`INSERT INTO limit_orders_migrations (version) VALUES (?)`), v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (r *sqlRepo) apply(ctx context.Context, tx *sql.Tx, step migration) error {
	if step.run != nil {
		return step.run(ctx, r, tx)
	}
	_, err := tx.ExecContext(ctx, step.sql)
	return err
}

// q writes ? placeholders as PostgreSQL's $n.
func (r *sqlRepo) q(s string) string {
	if !r.postgres {
		return s
	}
	var b strings.Builder
	n := 0
	for _, c := range s {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

const recordCols = `chain_id, hash, contract, kind, maker, market, token_id, body, accepted_at, accepted_block, deadline, closed`

func scanRecord(s interface{ Scan(...any) error }) (Record, error) {
	var rec Record
	var hash, contract, kind, maker, market, body string
	var closed sql.NullString
	var chainID, block int64
	err := s.Scan(&chainID, &hash, &contract, &kind, &maker, &market, &rec.TokenID, &body, &rec.AcceptedAt, &block, &rec.Deadline, &closed)
	if err != nil {
		return rec, err
	}
	rec.ChainID, rec.AcceptedBlock = uint64(chainID), uint64(block)
	rec.Hash, rec.Contract = common.HexToHash(hash), common.HexToAddress(contract)
	rec.Kind, rec.Maker, rec.Market = Kind(kind), common.HexToAddress(maker), common.HexToAddress(market)
	rec.Body = []byte(body)
	if closed.Valid {
		rec.Closed = []byte(closed.String)
	}
	return rec, nil
}

func (r *sqlRepo) Insert(ctx context.Context, rec Record, maxPerMaker int) (Record, bool, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return Record{}, false, err
	}
	defer func() { _ = tx.Rollback() }()
	if r.postgres {
		key := int64(binary.BigEndian.Uint64(rec.Maker[:8]))
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, key); err != nil {
			return Record{}, false, err
		}
	}
	row := tx.QueryRowContext(ctx, r.q(`SELECT `+recordCols+` FROM limit_orders WHERE chain_id = ? AND hash = ?`), int64(rec.ChainID), rec.Hash.Hex())
	if old, err := scanRecord(row); err == nil {
		return old, false, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, err
	}
	var open int
	if err := tx.QueryRowContext(ctx, r.q(`SELECT COUNT(*) FROM limit_orders WHERE chain_id = ? AND maker = ? AND closed IS NULL AND deadline >= ?`),
		int64(rec.ChainID), rec.Maker.Hex(), rec.AcceptedAt).Scan(&open); err != nil {
		return Record{}, false, err
	}
	if open >= maxPerMaker {
		return Record{}, false, ErrMakerFull
	}
	_, err = tx.ExecContext(ctx, r.q(`INSERT INTO limit_orders (`+recordCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`),
		int64(rec.ChainID), rec.Hash.Hex(), rec.Contract.Hex(), string(rec.Kind), rec.Maker.Hex(), rec.Market.Hex(), rec.TokenID,
		string(rec.Body), rec.AcceptedAt, int64(rec.AcceptedBlock), rec.Deadline)
	if err != nil {
		return Record{}, false, err
	}
	if err := tx.Commit(); err != nil {
		return Record{}, false, err
	}
	return rec, true, nil
}

func (r *sqlRepo) Get(ctx context.Context, chainID uint64, hash common.Hash) (Record, bool, error) {
	row := r.db.QueryRowContext(ctx, r.q(`SELECT `+recordCols+` FROM limit_orders WHERE chain_id = ? AND hash = ?`), int64(chainID), hash.Hex())
	rec, err := scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, false, nil
	}
	return rec, err == nil, err
}

func (r *sqlRepo) List(ctx context.Context, f Filter) ([]Record, error) {
	where := []string{"chain_id = ?"}
	args := []any{int64(f.ChainID)}
	if f.Maker != nil {
		where, args = append(where, "maker = ?"), append(args, f.Maker.Hex())
	}
	if f.Market != nil {
		where, args = append(where, "market = ?"), append(args, f.Market.Hex())
	}
	if f.TokenID != "" {
		where, args = append(where, "token_id = ?"), append(args, f.TokenID)
	}
	if f.OpenOnly {
		where = append(where, "closed IS NULL")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	rows, err := r.db.QueryContext(ctx, r.q(`SELECT `+recordCols+` FROM limit_orders WHERE `+strings.Join(where, " AND ")+
		` ORDER BY accepted_at DESC, hash LIMIT `+strconv.Itoa(limit)), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

func (r *sqlRepo) Close(ctx context.Context, chainID uint64, hash common.Hash, closure []byte) error {
	_, err := r.db.ExecContext(ctx, r.q(`UPDATE limit_orders SET closed = ? WHERE chain_id = ? AND hash = ? AND closed IS NULL`),
		string(closure), int64(chainID), hash.Hex())
	return err
}

func (r *sqlRepo) Count(ctx context.Context) (int, error) {
	var n int
	err := r.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM limit_orders`).Scan(&n)
	return n, err
}

func (r *sqlRepo) Shutdown() error { return r.db.Close() }
