package behaviour_test

import (
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

var (
	uniHandler     = common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	pancakeHandler = common.HexToAddress("0x9ae336B61D7d2e19a47607f163A3fB0e46306b7b")
	v1Handler      = common.HexToAddress("0xe11d346757d052214686bCbC860C94363AfB4a9A")
	wethUSDC       = common.HexToAddress("0xC6962004f452bE9203591991D15f6b388e09E8D0")
	hook24h        = common.HexToAddress("0x8c30c7F03421D2C9A0354e93c23014BF6C465a79")
	lp             = common.HexToAddress("0x1111111111111111111111111111111111111111")
)

// handlerState is tokenIds(id) as UniswapV3SingleTickLiquidityHandlerV2
// updates it, written from the contract (mintPositionHandler,
// burnPositionHandler, reserveLiquidity, withdrawReserveLiquidity,
// usePositionHandler, unusePositionHandler, donateToPosition).
type handlerState struct{ total, used, reserved *big.Int }

func newState() *handlerState {
	return &handlerState{new(big.Int), new(big.Int), new(big.Int)}
}

const (
	hV2      = "UniswapV3SingleTickLiquidityHandlerV2"
	hV1      = "UniswapV3SingleTickLiquidityHandler"
	mintedV2 = "LogMintedPosition(uint256,uint128,address,address,address,int24,int24)"
	burnedV2 = "LogBurnedPosition(uint256,uint128,address,address,address,int24,int24)"
)

func TestHandlerLiquidityFollowsEveryEvent(t *testing.T) {
	c := mappingtest.New(t, nil)
	const tl, tu = -200010, -200000 // negative ticks: int24 sign extension in the id
	id := mappingtest.PositionID(t, uniHandler, wethUSDC, hook24h, tl, tu)
	sid := mappingtest.StrikeID(uniHandler, wethUSDC, hook24h, tl, tu)
	s := newState()
	u128 := func(x int64) *big.Int { return big.NewInt(x) }
	check := func(step string) {
		t.Helper()
		for _, f := range []struct {
			name string
			want *big.Int
		}{{"totalLiquidity", s.total}, {"usedLiquidity", s.used}, {"reservedLiquidity", s.reserved}} {
			if got := c.Big("Strike", sid, f.name); got.Cmp(f.want) != 0 {
				t.Errorf("after %s: %s = %s, want %s", step, f.name, got, f.want)
			}
		}
	}

	// first mint: totalSupply 0, no compounding
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, u128(1_000_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	s.total.Add(s.total, u128(1_000_000))
	check("first mint")

	// a later mint compounds fees first (LogFeeCompound, then LogMintedPosition)
	c.Next(1001, 1_700_000_100, lp)
	c.Emit("HandlerV2_uniswap", hV2, "LogFeeCompound(address,address,uint256,int24,int24,uint128)", "handleFeeCompound", uniHandler,
		uniHandler, wethUSDC, id, big.NewInt(tl), big.NewInt(tu), u128(777))
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, u128(500_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	s.total.Add(s.total, u128(777+500_000))
	check("compound and mint")

	// an option uses 300k, the premium donates 1234
	c.Emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id, u128(300_000))
	s.used.Add(s.used, u128(300_000))
	c.Emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, u128(1234))
	s.total.Add(s.total, u128(1234))
	check("use and donation")

	// unuse: re-minted L below used, then above it (the overflow branch)
	unuse := func(l int64) {
		c.Emit("HandlerV2_uniswap", hV2, "LogUnusePosition(uint256,uint128)", "handleUnusePosition", uniHandler, id, u128(l))
		if s.used.Cmp(u128(l)) >= 0 {
			s.used.Sub(s.used, u128(l))
		} else {
			s.total.Add(s.total, new(big.Int).Sub(u128(l), s.used))
			s.used.SetInt64(0)
		}
	}
	unuse(200_000)
	check("unuse below used")
	unuse(100_003)
	check("unuse overflow")
	if s.used.Sign() != 0 || s.total.Cmp(u128(1_000_000+777+500_000+1234+3)) != 0 {
		t.Fatalf("test arithmetic: %+v", s)
	}

	// burn, reserve (LogBurnedPosition then LogReservedLiquidity), withdraw reserved
	c.Emit("HandlerV2_uniswap", hV2, burnedV2, "handleBurnedPositionV2", uniHandler,
		id, u128(400_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	s.total.Sub(s.total, u128(400_000))
	c.Emit("HandlerV2_uniswap", hV2, burnedV2, "handleBurnedPositionV2", uniHandler,
		id, u128(90_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	c.Emit("HandlerV2_uniswap", hV2, "LogReservedLiquidity(uint256,uint128,address)", "handleReservedLiquidity", uniHandler,
		id, u128(90_000), lp)
	s.total.Sub(s.total, u128(90_000))
	s.reserved.Add(s.reserved, u128(90_000))
	check("burn and reserve")
	c.Emit("HandlerV2_uniswap", hV2, "LogWithdrawReservedLiquidity(uint256,uint128,address)", "handleWithdrawReservedLiquidity", uniHandler,
		id, u128(60_000), lp)
	s.reserved.Sub(s.reserved, u128(60_000))
	check("withdraw reserved")

	// the stored identity of the range
	e := c.Store.Get("Strike", sid)
	if got := e["tokenId"].Big; got.Cmp(id) != 0 {
		t.Errorf("tokenId %s, want %s", got, id)
	}
	if got := common.BytesToAddress(e["hook"].Bytes); got != hook24h {
		t.Errorf("hook %s", got)
	}
	if e["tickLower"].Int != tl || e["tickUpper"].Int != tu {
		t.Errorf("ticks %d %d", e["tickLower"].Int, e["tickUpper"].Int)
	}
	// the pool became known (a Pool), and no data source follows its swaps
	if c.Store.Get("Pool", strings.ToLower(wethUSDC.Hex())) == nil {
		t.Error("no Pool")
	}
	if cr := c.Created["HandlerV2_uniswap"]; len(cr) != 0 {
		t.Errorf("created %v, want none", cr)
	}
}

// The Pancake, Agni and FusionX handlers emit (user, hook) where Uniswap's
// emits (hook, user), under the same topic; the position id tells which is
// the hook.
func TestHandlerHookSlotFromPositionID(t *testing.T) {
	c := mappingtest.New(t, nil)
	const tl, tu = 190000, 190010
	id := mappingtest.PositionID(t, pancakeHandler, wethUSDC, hook24h, tl, tu)
	c.Emit("HandlerV2_pancake", hV2, mintedV2, "handleMintedPositionV2", pancakeHandler,
		id, big.NewInt(5), wethUSDC, lp, hook24h, big.NewInt(tl), big.NewInt(tu)) // user first, as PancakeV3 handler emits
	c.WantBig("Strike", mappingtest.StrikeID(pancakeHandler, wethUSDC, hook24h, tl, tu), "totalLiquidity", big.NewInt(5))

	// an id matching neither slot is refused, not stored under a guess
	c.Emit("HandlerV2_pancake", hV2, mintedV2, "handleMintedPositionV2", pancakeHandler,
		big.NewInt(12345), big.NewInt(5), wethUSDC, lp, hook24h, big.NewInt(tl), big.NewInt(tu+10))
	if n := len(c.Store.All("Strike")); n != 1 {
		t.Errorf("%d strikes after an inconsistent event", n)
	}
	if logs := c.Logs["HandlerV2_pancake"]; len(logs) != 1 || logs[0].Level != 1 {
		t.Errorf("logs %+v, want one error", logs)
	}

	// the V1 handler has no hook: its id hashes four words
	const mintedV1 = "LogMintedPosition(uint256,uint128,address,address,int24,int24)"
	const burnedV1 = "LogBurnedPosition(uint256,uint128,address,address,int24,int24)"
	v1id := mappingtest.PositionIDV1(t, v1Handler, wethUSDC, tl, tu)
	c.Emit("HandlerV1_uniswap", hV1, mintedV1, "handleMintedPositionV1", v1Handler, v1id, big.NewInt(9), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu))
	v1strike := mappingtest.StrikeID(v1Handler, wethUSDC, common.Address{}, tl, tu)
	c.WantBig("Strike", v1strike, "totalLiquidity", big.NewInt(9))
	c.WantBig("Strike", v1strike, "tokenId", v1id)
	c.Emit("HandlerV1_uniswap", hV1, "LogUsePosition(uint256,uint128)", "handleUsePosition", v1Handler, v1id, big.NewInt(4))
	c.Emit("HandlerV1_uniswap", hV1, burnedV1, "handleBurnedPositionV1", v1Handler, v1id, big.NewInt(2), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu))
	c.WantBig("Strike", v1strike, "totalLiquidity", big.NewInt(7))
	c.WantBig("Strike", v1strike, "usedLiquidity", big.NewInt(4))
	// the V2 formula with a zero hook is not the V1 id: refused
	c.Emit("HandlerV1_uniswap", hV1, mintedV1, "handleMintedPositionV1", v1Handler, mappingtest.PositionID(t, v1Handler, wethUSDC, common.Address{}, tl, tu+10),
		big.NewInt(9), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu+10))
	if n := len(c.Store.All("Strike")); n != 2 {
		t.Errorf("%d strikes after a V1 event with a five-word id", n)
	}
}

// Daily donation and compound records carry the pool's price at the end
// of their log's block: slot0() by eth_call at that block (no data source
// follows the pool's swaps), the day's last record's. The Pool keeps the
// price it was first read at.
func TestDailyRecordsPriceAtTheirBlock(t *testing.T) {
	var asked []uint64 // the blocks slot0 was read at
	p0 := new(big.Int).Lsh(big.NewInt(1), 96)
	c := mappingtest.New(t, nil)
	pool, err := mapping.ABI("Pool")
	if err != nil {
		t.Fatal(err)
	}
	c.OnCall = func(to common.Address, data []byte, block uint64) {
		if to == wethUSDC && string(data[:4]) == string(pool.Methods["slot0"].ID) {
			asked = append(asked, block)
		}
	}
	const tl, tu = -10, 0
	id := mappingtest.PositionID(t, uniHandler, wethUSDC, common.Address{}, tl, tu)
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, big.NewInt(1000), wethUSDC, common.Address{}, lp, big.NewInt(tl), big.NewInt(tu))
	p1, _ := new(big.Int).SetString("79228162514264337593543950336", 10)
	p2, _ := new(big.Int).SetString("79232123823359799118286999567", 10)
	day := mappingtest.StrikeID(uniHandler, wethUSDC, common.Address{}, tl, tu) + "-1700006400"
	c.Next(2000, 1_700_006_400+3600, lp) // 1_700_006_400 is a UTC midnight
	c.Seeds[wethUSDC] = p1
	c.Emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, big.NewInt(40))
	c.WantBig("DailyDonation", day, "sqrtPriceX96", p1)
	c.Next(2001, 1_700_006_400+3601, lp)
	c.Seeds[wethUSDC] = p2
	c.Emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, big.NewInt(2))
	c.WantBig("DailyDonation", day, "donation", big.NewInt(42))
	c.WantBig("DailyDonation", day, "sqrtPriceX96", p2)
	if got := c.Store.Get("DailyDonation", day)["start"].Int; got != 1_700_006_400 {
		t.Errorf("start %d", got)
	}
	c.WantBig("Pool", strings.ToLower(wethUSDC.Hex()), "sqrtPriceX96", p0)
	if !slices.Contains(asked, 2000) || !slices.Contains(asked, 2001) {
		t.Errorf("slot0 read at blocks %v, want 2000 and 2001 among them", asked)
	}
}
