package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// writeStream is the write side of a backfill of the Arbitrum-shaped
// history (BenchmarkBackfillArbitrum's mix at 1/40 scale, counted by
// type: every event updates its range's Strike; a fifth are deposits, a
// fifth withdrawals, each an immutable record and the holder's
// LpPosition; a fifth donate to the range's day), a protocol event every
// benchStep blocks over 100 ranges and 2,000 providers, written through
// the Writer (Begin, Set, Stage) and committed every span blocks, as the
// indexer's flushes commit far below the head.
type writeStream struct {
	st    *Store
	first uint64
	span  uint64
	// flushes and flushing are the commits made and the time the
	// caller waited in them (the indexer's goroutine waits so).
	flushes  int
	flushing time.Duration
}

// flush commits, counting the time waited.
func (ws *writeStream) flush(ctx context.Context) error {
	t0 := time.Now()
	err := ws.st.Flush(ctx)
	ws.flushes++
	ws.flushing += time.Since(t0)
	return err
}

func (ws *writeStream) strike(k int, n uint64, liq int64) graphnode.Entity {
	tl := int64(-200_250 + 10*k)
	return graphnode.Entity{"id": str(strikeID(k%2, k)), "tokenId": bi(int64(k)), "handler": bs(hexAddr(0xd0, 0)),
		"pool": bs(benchPools[k%2]), "hook": bs(hexAddr(0xd1, 0)), "tickLower": graphnode.Int(tl), "tickUpper": graphnode.Int(tl + 10),
		"totalLiquidity": bi(liq), "usedLiquidity": bi(int64(n % 1000)), "reservedLiquidity": bi(0)}
}

// event writes event i at its block into w.
func (ws *writeStream) event(w *Writer, i int, n uint64) error {
	k := i % 100
	if err := w.Set("Strike", strikeID(k%2, k), ws.strike(k, n, int64(1_000_000+i)), n); err != nil {
		return err
	}
	user := hexAddr(0xc0, i%2000)
	switch i % 5 {
	case 0, 1:
		e := graphnode.Entity{"id": str(eventID(i)), "user": bs(user), "handler": bs(hexAddr(0xd0, 0)), "tokenId": bi(int64(k)),
			"strike": str(strikeID(k%2, k)), "pool": bs(benchPools[k%2]), "hook": bs(hexAddr(0xd1, 0)), "tickLower": graphnode.Int(int64(k)),
			"tickUpper": graphnode.Int(int64(k) + 10), "liquidity": bi(1_000_000), "shares": bi(999_000), "sqrtPriceX96": sqrtPrice,
			"blockNumber": bu(n), "timestamp": bu(benchTime(n)), "logOrder": bu(n << 32), "txHash": bs(txHash(i))}
		typ := "LpDeposit"
		if i%5 == 1 {
			typ, e["kind"] = "LpWithdrawal", str("Burn")
		} else {
			e["caller"] = bs(user)
		}
		if err := w.Set(typ, eventID(i), e, n); err != nil {
			return err
		}
		pid := strikeID(k%2, k) + "-" + user
		return w.Set("LpPosition", pid, graphnode.Entity{"id": str(pid), "user": bs(user), "handler": bs(hexAddr(0xd0, 0)),
			"tokenId": bi(int64(k)), "strike": str(strikeID(k%2, k)), "shares": bi(int64(i)), "principal": bi(int64(i)),
			"reservedLiquidity": bi(0), "open": graphnode.Bool(i%5 == 0), "openedAt": bu(benchTime(n)), "openedLogOrder": bu(n << 32),
			"updatedAt": bu(benchTime(n))}, n)
	case 2:
		day := benchTime(n) / 86400 * 86400
		id := fmt.Sprintf("%s-%d", strikeID(k%2, k), day)
		return w.Set("DailyDonation", id, graphnode.Entity{"id": str(id), "strike": str(strikeID(k%2, k)), "donation": bi(int64(i)),
			"sqrtPriceX96": sqrtPrice, "start": graphnode.Int(int64(day))}, n)
	}
	return nil
}

// write indexes events from..to-1, flushing when a span's end is passed.
func (ws *writeStream) write(ctx context.Context, from, to int) error {
	flushed := ws.first + uint64(from)*benchStep
	for i := from; i < to; i++ {
		n := ws.first + uint64(i)*benchStep
		w := ws.st.Begin(graphnode.Block{Number: n, Hash: txHash(i), ParentHash: txHash(i - 1), Timestamp: benchTime(n)})
		if err := ws.event(w, i, n); err != nil {
			return err
		}
		if err := w.Stage(ctx); err != nil {
			return err
		}
		if n-flushed >= ws.span {
			if err := ws.flush(ctx); err != nil {
				return err
			}
			flushed = n
		}
	}
	return ws.flush(ctx)
}

// BenchmarkBackfillWrites is the store's share of a backfill: the writes
// of 45,000 protocol events (about 100,000 entity versions) through the
// Writer with the default retention (benchKeep), committed every span
// blocks: 3,300,000 is what a three-second batch spans at 5,000 events a
// second (the target), 330,000 at a tenth of that (a loaded
// machine). It reports the process's CPU time per event (the writer
// goroutine's with the rest), the store's size and the mean time a Flush
// keeps its caller waiting (flush-ms; wall time: noisy on a shared
// machine).
//
//	go test ./internal/graphnode/sqlstore -run '^$' -bench BackfillWrites -benchtime 3x
func BenchmarkBackfillWrites(b *testing.B) {
	const events = 45_000
	for _, span := range []uint64{3_300_000, 330_000} {
		b.Run(fmt.Sprintf("span=%d", span), func(b *testing.B) {
			var cpu float64
			var size int64
			var flushes int
			var flushing time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st, _, err := Open(filepath.Join(b.TempDir(), "s.sqlite"), schema(b), "bench")
				if err != nil {
					b.Fatal(err)
				}
				st.SetHistory(benchKeep)
				ws := &writeStream{st: st, first: 100_000_000, span: span}
				b.StartTimer()
				cpu0 := cpuTime()
				if err := ws.write(context.Background(), 0, events); err != nil {
					b.Fatal(err)
				}
				cpu += (cpuTime() - cpu0).Seconds()
				b.StopTimer()
				flushes, flushing = flushes+ws.flushes, flushing+ws.flushing
				size = st.Size()
				_ = st.Close()
			}
			b.ReportMetric(cpu/float64(b.N)/events*1e6, "cpu-µs/event")
			b.ReportMetric(float64(size)/events, "store-B/event")
			b.ReportMetric(flushing.Seconds()*1e3/float64(flushes), "flush-ms")
		})
	}
}
