package indexer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
)

// BenchmarkStoreBytesPerDeposit indexes 5,000 deposits (LogMintedPosition
// in 50 ranges, one every 39 blocks over 200,000 blocks) and reports the
// store file's bytes per deposit once closed, keeping every version and
// keeping the last 10,000 blocks (the least CLAMM_INDEX_HISTORY_BLOCKS).
// Run it:
//
//	go test ./internal/indexer -run '^$' -bench StoreBytesPerDeposit -benchtime 1x
func BenchmarkStoreBytesPerDeposit(b *testing.B) {
	const deposits = 5000
	for _, keep := range []uint64{0, sqlstore.MinHistory} {
		b.Run(fmt.Sprintf("history=%d", keep), func(b *testing.B) {
			c, h := newChain(b, 200_000)
			c.MaxLogs = 10_000
			for i := 0; i < deposits; i++ {
				tl := -200_000 + 10*int64(i%50)
				c.Add(uint64(100+i*39), &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Mint(lp, tl, 1_000_000+int64(i))}})
			}
			for i := 0; i < b.N; i++ {
				path := filepath.Join(b.TempDir(), "42161.sqlite")
				ix := open(b, c, path, indexer.Options{History: keep})
				runToHead(b, ix, c.Head())
				if err := ix.Close(); err != nil {
					b.Fatal(err)
				}
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(fi.Size())/deposits, "bytes/deposit")
			}
		})
	}
}
