package orders

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func rec(chain uint64, hash byte, maker byte) Record {
	return Record{ChainID: chain, Hash: common.Hash{hash}, Contract: common.Address{9}, Kind: KindExercise,
		Maker: common.Address{maker}, Market: common.Address{8}, TokenID: "1", Body: []byte(`{}`), AcceptedAt: int64(hash), AcceptedBlock: 1, Deadline: 1 << 40}
}

// testRepository is the behaviour both stores share.
func testRepository(t *testing.T, r Repository) {
	ctx := context.Background()
	if _, created, err := r.Insert(ctx, rec(1, 1, 1), 2); err != nil || !created {
		t.Fatalf("insert: %v %v", created, err)
	}
	if _, created, err := r.Insert(ctx, rec(1, 1, 1), 2); err != nil || created {
		t.Fatalf("duplicate: %v %v", created, err)
	}
	if _, _, err := r.Insert(ctx, rec(1, 2, 1), 2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Insert(ctx, rec(1, 3, 1), 2); !errors.Is(err, ErrMakerFull) {
		t.Fatalf("third open order of a maker with bound 2: %v", err)
	}
	if _, _, err := r.Insert(ctx, rec(2, 3, 1), 2); err != nil {
		t.Fatalf("the bound is per chain: %v", err)
	}
	if err := r.Close(ctx, 1, common.Hash{1}, []byte(`{"status":"filled"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Insert(ctx, rec(1, 3, 1), 2); err != nil {
		t.Fatalf("a closed order frees its place: %v", err)
	}
	// Orders past their deadline no longer count against the bound: at
	// time 101, maker 5's two orders with deadline 100 leave room; at
	// time 100 they do not.
	for i, at := range []int64{100, 100, 100, 101} {
		o := rec(4, byte(60+i), 5)
		o.Deadline, o.AcceptedAt = 100, at
		_, _, err := r.Insert(ctx, o, 2)
		if wantFull := i == 2; errors.Is(err, ErrMakerFull) != wantFull || (!wantFull && err != nil) {
			t.Fatalf("order %d at time %d with two live orders of deadline 100: %v", i, at, err)
		}
	}
	maker := common.Address{1}
	got, err := r.List(ctx, Filter{ChainID: 1, Maker: &maker, OpenOnly: true})
	if err != nil || len(got) != 2 {
		t.Fatalf("open orders: %d %v", len(got), err)
	}
	one, ok, err := r.Get(ctx, 1, common.Hash{1})
	if err != nil || !ok || string(one.Closed) != `{"status":"filled"}` || one.Maker != maker {
		t.Fatalf("get: %+v %v %v", one, ok, err)
	}
	// Concurrent inserts of one maker never pass the bound.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, _, _ = r.Insert(ctx, rec(3, byte(10+i), 7), 5)
		}(i)
	}
	wg.Wait()
	m7 := common.Address{7}
	if got, _ := r.List(ctx, Filter{ChainID: 3, Maker: &m7}); len(got) != 5 {
		t.Fatalf("concurrent inserts kept %d, bound 5", len(got))
	}
}

func TestSQLiteRepository(t *testing.T) {
	path := filepath.Join(t.TempDir(), "book.db")
	r, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	testRepository(t, r)
	if err := r.Shutdown(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenSQLite(context.Background(), path) // migrations run once; the book is kept
	if err != nil {
		t.Fatal(err)
	}
	defer again.Shutdown()
	if n, _ := again.Count(context.Background()); n != 12 {
		t.Fatalf("reopened book holds %d", n)
	}
}

// A book written before the deadline column is migrated: each stored
// order gets its body's deadline, so an expired one frees its maker's
// place at once.
func TestMigrationGivesStoredOrdersTheirDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	saved := migrations
	migrations = migrations[:3] // the schema before the column
	old, err := OpenSQLite(context.Background(), path)
	migrations = saved
	if err != nil {
		t.Fatal(err)
	}
	db := old.(*sqlRepo).db
	for i, body := range []string{`{"deadline":"100"}`, `{"deadline":"0x64"}`} {
		_, err := db.Exec(`INSERT INTO limit_orders (chain_id, hash, contract, kind, maker, market, token_id, body, accepted_at, accepted_block, closed)
			VALUES (1, ?, '0x09', 'exercise', ?, '0x08', '1', ?, 10, 1, NULL)`, common.Hash{byte(i)}.Hex(), common.Address{1}.Hex(), body)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Shutdown(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown()
	for i := 0; i < 2; i++ {
		got, ok, err := r.Get(context.Background(), 1, common.Hash{byte(i)})
		if err != nil || !ok || got.Deadline != 100 {
			t.Fatalf("order %d after the migration: deadline %d, %v %v", i, got.Deadline, ok, err)
		}
	}
	o := rec(1, 9, 1)
	o.AcceptedAt = 101
	if _, _, err := r.Insert(context.Background(), o, 1); err != nil {
		t.Fatalf("the migrated orders' deadlines passed, yet: %v", err)
	}
}
