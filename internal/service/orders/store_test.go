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
		Maker: common.Address{maker}, Market: common.Address{8}, TokenID: "1", Body: []byte(`{}`), AcceptedAt: int64(hash), AcceptedBlock: 1}
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
	r, err := OpenSQLite(path)
	if err != nil {
		t.Fatal(err)
	}
	testRepository(t, r)
	if err := r.Shutdown(); err != nil {
		t.Fatal(err)
	}
	again, err := OpenSQLite(path) // migrations run once; the book is kept
	if err != nil {
		t.Fatal(err)
	}
	defer again.Shutdown()
	if n, _ := again.Count(context.Background()); n != 9 {
		t.Fatalf("reopened book holds %d", n)
	}
}
