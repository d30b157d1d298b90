package orders_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders/pgtest"
)

// Two replicas, each with its own pool, on one real PostgreSQL serve one
// book: what one accepts the other reads, a duplicate sent to the other
// is answered with the stored order, and the per-maker bound holds across
// both under concurrent submissions.
func TestTwoReplicasShareOneBook(t *testing.T) {
	pg := pgtest.Start(t)
	var reps [2]orders.Repository
	var wg sync.WaitGroup
	for i := range reps { // both migrate at once: one migration path, run once
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r, err := orders.OpenPostgres(context.Background(), pg.URL)
			if err != nil {
				t.Error(err)
				return
			}
			reps[i] = r
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, r := range reps {
		t.Cleanup(func() { _ = r.Shutdown() })
	}
	ctx := context.Background()
	a := orders.Record{ChainID: 1, Hash: common.Hash{1}, Contract: common.Address{9}, Kind: orders.KindExercise,
		Maker: common.Address{1}, Market: common.Address{8}, TokenID: "1", Body: []byte(`{}`), AcceptedAt: 1, AcceptedBlock: 1, Deadline: 1 << 40}
	if _, created, err := reps[0].Insert(ctx, a, 10); err != nil || !created {
		t.Fatalf("replica 0: %v %v", created, err)
	}
	if got, created, err := reps[1].Insert(ctx, a, 10); err != nil || created || got.Hash != a.Hash {
		t.Fatalf("replica 1 took a duplicate: %v %v", created, err)
	}
	if got, ok, err := reps[1].Get(ctx, 1, a.Hash); err != nil || !ok || got.Maker != a.Maker {
		t.Fatalf("replica 1 does not read replica 0's order: %v %v", ok, err)
	}
	if err := reps[1].Close(ctx, 1, a.Hash, []byte(`{"status":"filled"}`)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := reps[0].Get(ctx, 1, a.Hash); string(got.Closed) != `{"status":"filled"}` {
		t.Fatalf("replica 0 does not see replica 1's close: %q", got.Closed)
	}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := a
			r.Hash, r.Maker = common.Hash{byte(10 + i)}, common.Address{7}
			_, _, _ = reps[i%2].Insert(ctx, r, 5)
		}(i)
	}
	wg.Wait()
	m := common.Address{7}
	for i, r := range reps {
		if got, err := r.List(ctx, orders.Filter{ChainID: 1, Maker: &m}); err != nil || len(got) != 5 {
			t.Fatalf("replica %d reads %d orders of a maker bounded to 5 (%v)", i, len(got), err)
		}
	}
}
