package mapping

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// chain feeds real ABI-encoded logs to the compiled data sources of one
// store, numbering log indexes within a block as a node would.
type chain struct {
	t      *testing.T
	seeds  map[common.Address]*big.Int // slot0 sqrtPriceX96 answers by pool
	store  *graphnode.Store
	hosts  map[string]*Host
	block  Block
	tx     Tx
	logIdx uint
	// logs and created are what each data source's handlers logged and
	// created, in order
	logs    map[string][]Log
	created map[string][]Created
	// pairs answers a pool's token0() and token1() (reverting for a pool
	// without an entry); approved answers a market's approvedPools(pool)
	// (false without an entry).
	pairs    map[common.Address][2]common.Address
	approved map[[2]common.Address]bool
	// onCall, when set, sees every eth_call (the contract, the calldata,
	// the block it is asked at) before it is answered.
	onCall func(to common.Address, data []byte, block uint64)
}

// testCall answers an ethereum.call of a test: the contract, the calldata
// and the block number.
type testCall func(to common.Address, data []byte, block uint64) ([]byte, bool, error)

// newStore is an empty in-memory store of the subgraph's schema.
func newStore(t *testing.T) *graphnode.Store {
	t.Helper()
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return graphnode.NewStore(s)
}

func newChain(t *testing.T, call testCall) *chain {
	t.Helper()
	store := newStore(t)
	c := &chain{t: t, store: store, hosts: map[string]*Host{}, seeds: map[common.Address]*big.Int{},
		logs: map[string][]Log{}, created: map[string][]Created{},
		pairs: map[common.Address][2]common.Address{}, approved: map[[2]common.Address]bool{}}
	pool, err := ABI("Pool")
	if err != nil {
		t.Fatal(err)
	}
	market, err := ABI(mV2)
	if err != nil {
		t.Fatal(err)
	}
	uniSlot0, err := ABI("Slot0UniswapV3")
	if err != nil {
		t.Fatal(err)
	}
	slot0, approvedPools := pool.Methods["slot0"], market.Methods["approvedPools"]
	next := call
	// slot0() of a pool answers the test's seed price (2^96, price 1, when
	// none is set) with the real getter's leading outputs
	call = func(to common.Address, data []byte, block uint64) ([]byte, bool, error) {
		if c.onCall != nil && len(data) >= 4 {
			c.onCall(to, data, block)
		}
		if len(data) >= 4 && string(data[:4]) == string(slot0.ID) {
			seed := c.seeds[to]
			if seed == nil {
				seed = new(big.Int).Lsh(big.NewInt(1), 96)
			}
			// the whole of Uniswap V3's slot0 (every layout reads its
			// leading words; the others' last words differ only in width)
			out, err := uniSlot0.Methods["slot0"].Outputs.Pack(seed, big.NewInt(0), uint16(0), uint16(1), uint16(1), uint8(0), true)
			return out, false, err
		}
		for i, name := range []string{"token0", "token1"} {
			if len(data) >= 4 && string(data[:4]) == string(pool.Methods[name].ID) {
				pair, ok := c.pairs[to]
				if !ok {
					return nil, true, nil
				}
				out, err := pool.Methods[name].Outputs.Pack(pair[i])
				return out, false, err
			}
		}
		if len(data) >= 4 && string(data[:4]) == string(approvedPools.ID) {
			args, err := approvedPools.Inputs.Unpack(data[4:])
			if err != nil {
				return nil, false, err
			}
			out, err := approvedPools.Outputs.Pack(c.approved[[2]common.Address{to, args[0].(common.Address)}])
			return out, false, err
		}
		if next == nil {
			return nil, false, fmt.Errorf("unexpected eth_call %x to %s", data[:4], to)
		}
		return next(to, data, block)
	}
	c.load("arbitrum-one", call, "HandlerV2_uniswap", "HandlerV2_pancake", "HandlerV1_uniswap", "OptionMarketV2_0x501b", "OptionMarketV1_0x764f", "PositionManager")
	c.next(1000, 1_700_000_000, common.Address{0xee})
	return c
}

// load runs the named data sources of network's built manifest on c's
// store, eth_calls answered by call.
func (c *chain) load(network string, call testCall, sources ...string) {
	c.t.Helper()
	m, err := Network(network)
	if err != nil {
		c.t.Fatal(err)
	}
	answer := func(_ context.Context, to common.Address, data []byte, at Block) ([]byte, bool, error) {
		return call(to, data, at.Number)
	}
	for _, ds := range sources {
		src, ok := m.Source(ds)
		if !ok {
			c.t.Fatalf("no data source %s", ds)
		}
		code, err := subgraph.Build.ReadFile(src.Wasm)
		if err != nil {
			c.t.Fatal(err)
		}
		h, err := New(context.Background(), src.Wasm, code, Memory(c.store), Options{Call: answer, ABIs: src.ABIs, Network: network})
		if err != nil {
			c.t.Fatal(err)
		}
		c.t.Cleanup(h.Close)
		c.hosts[ds] = h
	}
}

// next starts a new block with one transaction from `from`.
func (c *chain) next(number, timestamp uint64, from common.Address) {
	c.block = Block{Number: number, Timestamp: timestamp, Hash: crypto.Keccak256Hash(big.NewInt(int64(number)).Bytes())}
	c.tx = Tx{Hash: crypto.Keccak256Hash([]byte{byte(number), byte(number >> 8), byte(len(c.hosts))}), From: from}
	c.logIdx = 0
}

// emit encodes event `name` of ABI `abiName` with args in the ABI's order
// (indexed ones into topics), as the contract would, and runs handler.
func (c *chain) emit(ds, abiName, sig, handler string, addr common.Address, args ...any) {
	c.t.Helper()
	a, err := ABI(abiName)
	if err != nil {
		c.t.Fatal(err)
	}
	var ev abi.Event
	found := false
	for _, e := range a.Events {
		if e.Sig == sig {
			ev, found = e, true
		}
	}
	if !found {
		c.t.Fatalf("%s has no event %s", abiName, sig)
	}
	topics := []common.Hash{ev.ID}
	var data []any
	for i, in := range ev.Inputs {
		if in.Indexed {
			switch v := args[i].(type) {
			case common.Address:
				topics = append(topics, common.BytesToHash(v.Bytes()))
			case *big.Int:
				topics = append(topics, common.BigToHash(v))
			default:
				c.t.Fatalf("indexed %T", v)
			}
			continue
		}
		data = append(data, args[i])
	}
	packed, err := ev.Inputs.NonIndexed().Pack(data...)
	if err != nil {
		c.t.Fatalf("pack %s: %v", sig, err)
	}
	lg := types.Log{Address: addr, Topics: topics, Data: packed, Index: c.logIdx, TxHash: c.tx.Hash}
	c.logIdx++
	out, err := c.hosts[ds].Handle(context.Background(), Trigger{Handler: handler, Event: ev, Log: lg, Block: c.block, Tx: c.tx})
	c.logs[ds] = append(c.logs[ds], out.Logs...)
	c.created[ds] = append(c.created[ds], out.Created...)
	if err != nil {
		c.t.Fatalf("%s %s: %v", ds, handler, err)
	}
}

func (c *chain) big(typ, id, fld string) *big.Int {
	c.t.Helper()
	e := c.store.Get(typ, id)
	if e == nil {
		c.t.Fatalf("no %s %s; have %v", typ, id, c.store.All(typ))
	}
	v, err := e.BigInt(fld)
	if err != nil {
		c.t.Fatalf("%s %s: %v", typ, id, err)
	}
	return v
}

func (c *chain) wantBig(typ, id, fld string, want *big.Int) {
	c.t.Helper()
	if got := c.big(typ, id, fld); got.Cmp(want) != 0 {
		c.t.Errorf("%s %s .%s = %s, want %s", typ, id, fld, got, want)
	}
}

var (
	uniHandler     = common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	pancakeHandler = common.HexToAddress("0x9ae336B61D7d2e19a47607f163A3fB0e46306b7b")
	v1Handler      = common.HexToAddress("0xe11d346757d052214686bCbC860C94363AfB4a9A")
	wethUSDC       = common.HexToAddress("0xC6962004f452bE9203591991D15f6b388e09E8D0")
	hook24h        = common.HexToAddress("0x8c30c7F03421D2C9A0354e93c23014BF6C465a79")
	lp             = common.HexToAddress("0x1111111111111111111111111111111111111111")
)

// positionID is the handler's tokenId, computed here with go-ethereum's ABI
// encoder: keccak256(abi.encode(handler, pool, hook, tickLower, tickUpper)).
func positionID(t *testing.T, handler, pool, hook common.Address, tl, tu int64) *big.Int {
	t.Helper()
	addr, _ := abi.NewType("address", "", nil)
	i24, _ := abi.NewType("int24", "", nil)
	packed, err := abi.Arguments{{Type: addr}, {Type: addr}, {Type: addr}, {Type: i24}, {Type: i24}}.
		Pack(handler, pool, hook, big.NewInt(tl), big.NewInt(tu))
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(crypto.Keccak256(packed))
}

// positionIDV1 is the V1 handler's tokenId as UniswapV3SingleTickLiquidityHandler
// derives it (getHandlerIdentifier, mintPositionHandler, burnPositionHandler):
// four words, no hook: keccak256(abi.encode(handler, pool, tickLower, tickUpper)).
func positionIDV1(t *testing.T, handler, pool common.Address, tl, tu int64) *big.Int {
	t.Helper()
	addr, _ := abi.NewType("address", "", nil)
	i24, _ := abi.NewType("int24", "", nil)
	packed, err := abi.Arguments{{Type: addr}, {Type: addr}, {Type: i24}, {Type: i24}}.Pack(handler, pool, big.NewInt(tl), big.NewInt(tu))
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(crypto.Keccak256(packed))
}

func strikeID(handler, pool, hook common.Address, tl, tu int64) string {
	return strings.ToLower(handler.Hex()) + "-" + strings.ToLower(pool.Hex()) + "-" + strings.ToLower(hook.Hex()) +
		"-" + big.NewInt(tl).String() + "-" + big.NewInt(tu).String()
}

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
	c := newChain(t, nil)
	const tl, tu = -200010, -200000 // negative ticks: int24 sign extension in the id
	id := positionID(t, uniHandler, wethUSDC, hook24h, tl, tu)
	sid := strikeID(uniHandler, wethUSDC, hook24h, tl, tu)
	s := newState()
	u128 := func(x int64) *big.Int { return big.NewInt(x) }
	check := func(step string) {
		t.Helper()
		for _, f := range []struct {
			name string
			want *big.Int
		}{{"totalLiquidity", s.total}, {"usedLiquidity", s.used}, {"reservedLiquidity", s.reserved}} {
			if got := c.big("Strike", sid, f.name); got.Cmp(f.want) != 0 {
				t.Errorf("after %s: %s = %s, want %s", step, f.name, got, f.want)
			}
		}
	}

	// first mint: totalSupply 0, no compounding
	c.emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, u128(1_000_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	s.total.Add(s.total, u128(1_000_000))
	check("first mint")

	// a later mint compounds fees first (LogFeeCompound, then LogMintedPosition)
	c.next(1001, 1_700_000_100, lp)
	c.emit("HandlerV2_uniswap", hV2, "LogFeeCompound(address,address,uint256,int24,int24,uint128)", "handleFeeCompound", uniHandler,
		uniHandler, wethUSDC, id, big.NewInt(tl), big.NewInt(tu), u128(777))
	c.emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, u128(500_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	s.total.Add(s.total, u128(777+500_000))
	check("compound and mint")

	// an option uses 300k, the premium donates 1234
	c.emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id, u128(300_000))
	s.used.Add(s.used, u128(300_000))
	c.emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, u128(1234))
	s.total.Add(s.total, u128(1234))
	check("use and donation")

	// unuse: re-minted L below used, then above it (the overflow branch)
	unuse := func(l int64) {
		c.emit("HandlerV2_uniswap", hV2, "LogUnusePosition(uint256,uint128)", "handleUnusePosition", uniHandler, id, u128(l))
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
	c.emit("HandlerV2_uniswap", hV2, burnedV2, "handleBurnedPositionV2", uniHandler,
		id, u128(400_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	s.total.Sub(s.total, u128(400_000))
	c.emit("HandlerV2_uniswap", hV2, burnedV2, "handleBurnedPositionV2", uniHandler,
		id, u128(90_000), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
	c.emit("HandlerV2_uniswap", hV2, "LogReservedLiquidity(uint256,uint128,address)", "handleReservedLiquidity", uniHandler,
		id, u128(90_000), lp)
	s.total.Sub(s.total, u128(90_000))
	s.reserved.Add(s.reserved, u128(90_000))
	check("burn and reserve")
	c.emit("HandlerV2_uniswap", hV2, "LogWithdrawReservedLiquidity(uint256,uint128,address)", "handleWithdrawReservedLiquidity", uniHandler,
		id, u128(60_000), lp)
	s.reserved.Sub(s.reserved, u128(60_000))
	check("withdraw reserved")

	// the stored identity of the range
	e := c.store.Get("Strike", sid)
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
	if c.store.Get("Pool", strings.ToLower(wethUSDC.Hex())) == nil {
		t.Error("no Pool")
	}
	if cr := c.created["HandlerV2_uniswap"]; len(cr) != 0 {
		t.Errorf("created %v, want none", cr)
	}
}

// The Pancake, Agni and FusionX handlers emit (user, hook) where Uniswap's
// emits (hook, user), under the same topic; the position id tells which is
// the hook.
func TestHandlerHookSlotFromPositionID(t *testing.T) {
	c := newChain(t, nil)
	const tl, tu = 190000, 190010
	id := positionID(t, pancakeHandler, wethUSDC, hook24h, tl, tu)
	c.emit("HandlerV2_pancake", hV2, mintedV2, "handleMintedPositionV2", pancakeHandler,
		id, big.NewInt(5), wethUSDC, lp, hook24h, big.NewInt(tl), big.NewInt(tu)) // user first, as PancakeV3 handler emits
	c.wantBig("Strike", strikeID(pancakeHandler, wethUSDC, hook24h, tl, tu), "totalLiquidity", big.NewInt(5))

	// an id matching neither slot is refused, not stored under a guess
	c.emit("HandlerV2_pancake", hV2, mintedV2, "handleMintedPositionV2", pancakeHandler,
		big.NewInt(12345), big.NewInt(5), wethUSDC, lp, hook24h, big.NewInt(tl), big.NewInt(tu+10))
	if n := len(c.store.All("Strike")); n != 1 {
		t.Errorf("%d strikes after an inconsistent event", n)
	}
	if logs := c.logs["HandlerV2_pancake"]; len(logs) != 1 || logs[0].Level != 1 {
		t.Errorf("logs %+v, want one error", logs)
	}

	// the V1 handler has no hook: its id hashes four words
	const mintedV1 = "LogMintedPosition(uint256,uint128,address,address,int24,int24)"
	const burnedV1 = "LogBurnedPosition(uint256,uint128,address,address,int24,int24)"
	v1id := positionIDV1(t, v1Handler, wethUSDC, tl, tu)
	c.emit("HandlerV1_uniswap", hV1, mintedV1, "handleMintedPositionV1", v1Handler, v1id, big.NewInt(9), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu))
	v1strike := strikeID(v1Handler, wethUSDC, common.Address{}, tl, tu)
	c.wantBig("Strike", v1strike, "totalLiquidity", big.NewInt(9))
	c.wantBig("Strike", v1strike, "tokenId", v1id)
	c.emit("HandlerV1_uniswap", hV1, "LogUsePosition(uint256,uint128)", "handleUsePosition", v1Handler, v1id, big.NewInt(4))
	c.emit("HandlerV1_uniswap", hV1, burnedV1, "handleBurnedPositionV1", v1Handler, v1id, big.NewInt(2), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu))
	c.wantBig("Strike", v1strike, "totalLiquidity", big.NewInt(7))
	c.wantBig("Strike", v1strike, "usedLiquidity", big.NewInt(4))
	// the V2 formula with a zero hook is not the V1 id: refused
	c.emit("HandlerV1_uniswap", hV1, mintedV1, "handleMintedPositionV1", v1Handler, positionID(t, v1Handler, wethUSDC, common.Address{}, tl, tu+10),
		big.NewInt(9), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu+10))
	if n := len(c.store.All("Strike")); n != 2 {
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
	c := newChain(t, nil)
	pool, err := ABI("Pool")
	if err != nil {
		t.Fatal(err)
	}
	c.onCall = func(to common.Address, data []byte, block uint64) {
		if to == wethUSDC && string(data[:4]) == string(pool.Methods["slot0"].ID) {
			asked = append(asked, block)
		}
	}
	const tl, tu = -10, 0
	id := positionID(t, uniHandler, wethUSDC, common.Address{}, tl, tu)
	c.emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, big.NewInt(1000), wethUSDC, common.Address{}, lp, big.NewInt(tl), big.NewInt(tu))
	p1, _ := new(big.Int).SetString("79228162514264337593543950336", 10)
	p2, _ := new(big.Int).SetString("79232123823359799118286999567", 10)
	day := strikeID(uniHandler, wethUSDC, common.Address{}, tl, tu) + "-1700006400"
	c.next(2000, 1_700_006_400+3600, lp) // 1_700_006_400 is a UTC midnight
	c.seeds[wethUSDC] = p1
	c.emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, big.NewInt(40))
	c.wantBig("DailyDonation", day, "sqrtPriceX96", p1)
	c.next(2001, 1_700_006_400+3601, lp)
	c.seeds[wethUSDC] = p2
	c.emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, big.NewInt(2))
	c.wantBig("DailyDonation", day, "donation", big.NewInt(42))
	c.wantBig("DailyDonation", day, "sqrtPriceX96", p2)
	if got := c.store.Get("DailyDonation", day)["start"].Int; got != 1_700_006_400 {
		t.Errorf("start %d", got)
	}
	c.wantBig("Pool", strings.ToLower(wethUSDC.Hex()), "sqrtPriceX96", p0)
	if !slices.Contains(asked, 2000) || !slices.Contains(asked, 2001) {
		t.Errorf("slot0 read at blocks %v, want 2000 and 2001 among them", asked)
	}
}

func TestMissingImportNamedAtInstantiation(t *testing.T) {
	// a module importing index.store.nope: () -> ()
	mod := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" +
		"\x02\x14\x01\x05index\x0astore.nope\x00\x00")
	_, err := New(context.Background(), "m.wasm", mod, Memory(newStore(t)), Options{})
	if err == nil || !strings.Contains(err.Error(), "index.store.nope") {
		t.Fatalf("err = %v, want it to name index.store.nope", err)
	}
}

func TestMissingManifestSaysHowToBuild(t *testing.T) {
	_, err := LoadManifest(subgraph.Build, "build/nowhere/subgraph.yaml")
	if err == nil || !strings.Contains(err.Error(), "npm run --prefix subgraph build") {
		t.Fatalf("err = %v", err)
	}
}
