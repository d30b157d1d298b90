package mapping_test

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

// BenchmarkHandle runs a handler's deposit, use, donation and unuse (four
// triggers, each reading and writing the Position, Strike and their
// aggregates) per op, on the in-memory store: the host's cost per
// trigger (CPU, allocations) apart from the node and SQLite. The logs are
// encoded once, outside the loop.
func BenchmarkHandle(b *testing.B) {
	c := mappingtest.New(b, nil)
	h := c.Hosts["HandlerV2_uniswap"]
	handler, err := mapping.ABI(hV2)
	if err != nil {
		b.Fatal(err)
	}
	const tl, tu = -200010, -200000
	id := mappingtest.PositionID(b, uniHandler, wethUSDC, hook24h, tl, tu)
	trigger := func(sig, name string, args ...any) mapping.Trigger {
		var ev abi.Event
		for _, e := range handler.Events {
			if e.Sig == sig {
				ev = e
			}
		}
		topics := []common.Hash{ev.ID}
		var data []any
		for i, in := range ev.Inputs {
			if in.Indexed {
				topics = append(topics, common.BigToHash(args[i].(*big.Int)))
			} else {
				data = append(data, args[i])
			}
		}
		packed, err := ev.Inputs.NonIndexed().Pack(data...)
		if err != nil {
			b.Fatal(err)
		}
		return mapping.Trigger{Handler: name, Event: ev, Log: types.Log{Address: uniHandler, Topics: topics, Data: packed}}
	}
	triggers := []mapping.Trigger{
		trigger(mintedV2, "handleMintedPositionV2", id, big.NewInt(1_000_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu)),
		trigger("LogUsePosition(uint256,uint128)", "handleUsePosition", id, big.NewInt(300_000)),
		trigger("LogDonation(uint256,uint128)", "handleDonation", id, big.NewInt(1234)),
		trigger("LogUnusePosition(uint256,uint128)", "handleUnusePosition", id, big.NewInt(100_000)),
	}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Next(uint64(1000+i), uint64(1_700_000_000+i), lp)
		for j, t := range triggers {
			t.Block, t.Tx, t.Log.Index = c.Block, c.Tx, uint(j)
			if _, err := h.Handle(ctx, t); err != nil {
				b.Fatal(err)
			}
		}
	}
}
