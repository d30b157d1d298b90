// Package mappingtest runs the subgraph's compiled mappings (the embedded
// subgraph/build, as the indexer runs them) on real ABI-encoded events,
// each handed to the handler a test names, into an in-memory store of the
// subgraph's schema, with the eth_calls the handlers make answered by the
// test.
//
// It is the harness of the subgraph's behaviour tests (subgraph/behaviour:
// what the mappings write for each event) and of the runtime's tests that
// need real mappings (internal/graphnode/mapping's external tests). It is
// a package of its own because both sides import it: mapping's own test
// files cannot export it (no other package sees them), and a harness in
// subgraph would import the runtime that imports subgraph.
package mappingtest

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Chain feeds real ABI-encoded logs to the compiled data sources of one
// store, numbering log indexes within a block as a node would.
type Chain struct {
	t testing.TB
	// Store is what the mappings wrote.
	Store *graphnode.Store
	// Hosts are the loaded data sources' runtimes, by data source name.
	Hosts map[string]*mapping.Host
	// Block and Tx are those of the next event emitted (Next sets both).
	Block  mapping.Block
	Tx     mapping.Tx
	logIdx uint
	// Logs and Created are what each data source's handlers logged and
	// created, in order.
	Logs    map[string][]mapping.Log
	Created map[string][]mapping.Created
	// Seeds answer a pool's slot0() sqrtPriceX96 (2^96 without an entry);
	// Pairs a pool's token0() and token1() (reverting without an entry);
	// Approved a market's approvedPools(pool) (false without an entry).
	// Only a chain made by New answers these itself.
	Seeds    map[common.Address]*big.Int
	Pairs    map[common.Address][2]common.Address
	Approved map[[2]common.Address]bool
	// OnCall, when set, sees every eth_call (the contract, the calldata,
	// the block it is asked at) before it is answered.
	OnCall func(to common.Address, data []byte, block uint64)
}

// Call answers an ethereum.call of a test: the contract, the calldata and
// the block number; reverted reports a revert.
type Call func(to common.Address, data []byte, block uint64) (ret []byte, reverted bool, err error)

// Arbitrum is the data sources of the Arbitrum One manifest New loads.
var Arbitrum = []string{"HandlerV2_uniswap", "HandlerV2_pancake", "HandlerV1_uniswap", "OptionMarketV2_0x501b", "OptionMarketV1_0x764f", "PositionManager"}

// NewStore is an empty in-memory store of the subgraph's schema.
func NewStore(t testing.TB) *graphnode.Store {
	t.Helper()
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	return graphnode.NewStore(s)
}

func empty(t testing.TB) *Chain {
	return &Chain{t: t, Store: NewStore(t), Hosts: map[string]*mapping.Host{}, Seeds: map[common.Address]*big.Int{},
		Logs: map[string][]mapping.Log{}, Created: map[string][]mapping.Created{},
		Pairs: map[common.Address][2]common.Address{}, Approved: map[[2]common.Address]bool{}}
}

// New is a chain of the Arbitrum One data sources (Arbitrum) at block 1000:
// a pool's slot0, token0 and token1 and a market's approvedPools are
// answered from Seeds, Pairs and Approved, every other eth_call by call
// (nil: an unexpected call fails the handler).
func New(t testing.TB, call Call) *Chain {
	t.Helper()
	c := empty(t)
	c.Load("arbitrum-one", c.answering(call), Arbitrum...)
	c.Next(1000, 1_700_000_000, common.Address{0xee})
	return c
}

// OnNetwork is a chain of network's named data sources at block
// 300,000,000, every eth_call answered by call alone.
func OnNetwork(t testing.TB, network string, call Call, sources ...string) *Chain {
	t.Helper()
	c := empty(t)
	c.Load(network, call, sources...)
	c.Next(300_000_000, 1_738_000_000, common.Address{0xee})
	return c
}

// answering wraps next with the answers of the chain's pools and markets.
func (c *Chain) answering(next Call) Call {
	pool := c.abi("Pool")
	token0, token1 := pool.Methods["token0"], pool.Methods["token1"]
	market := c.abi("DopexV2OptionMarketV2")
	slot0 := c.abi("Slot0UniswapV3").Methods["slot0"]
	approvedPools := market.Methods["approvedPools"]
	return func(to common.Address, data []byte, block uint64) ([]byte, bool, error) {
		if len(data) < 4 {
			return nil, false, fmt.Errorf("eth_call of %d bytes to %s", len(data), to)
		}
		if c.OnCall != nil {
			c.OnCall(to, data, block)
		}
		switch sel := string(data[:4]); {
		case sel == string(slot0.ID):
			seed := c.Seeds[to]
			if seed == nil {
				seed = new(big.Int).Lsh(big.NewInt(1), 96)
			}
			// the whole of Uniswap V3's slot0 (every layout reads its
			// leading words; the others' last words differ only in width)
			out, err := slot0.Outputs.Pack(seed, big.NewInt(0), uint16(0), uint16(1), uint16(1), uint8(0), true)
			return out, false, err
		case sel == string(token0.ID), sel == string(token1.ID):
			pair, ok := c.Pairs[to]
			if !ok {
				return nil, true, nil
			}
			m, token := token0, pair[0]
			if sel == string(token1.ID) {
				m, token = token1, pair[1]
			}
			out, err := m.Outputs.Pack(token)
			return out, false, err
		case sel == string(approvedPools.ID):
			args, err := approvedPools.Inputs.Unpack(data[4:])
			if err != nil {
				return nil, false, err
			}
			out, err := approvedPools.Outputs.Pack(c.Approved[[2]common.Address{to, args[0].(common.Address)}])
			return out, false, err
		}
		if next == nil {
			return nil, false, fmt.Errorf("unexpected eth_call %x to %s", data[:4], to)
		}
		return next(to, data, block)
	}
}

func (c *Chain) abi(name string) abi.ABI {
	c.t.Helper()
	a, err := mapping.ABI(name)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

// Load runs the named data sources of network's built manifest on c's
// store, eth_calls answered by call.
func (c *Chain) Load(network string, call Call, sources ...string) {
	c.t.Helper()
	m, err := mapping.Network(network)
	if err != nil {
		c.t.Fatal(err)
	}
	answer := func(_ context.Context, to common.Address, data []byte, at mapping.Block) ([]byte, bool, error) {
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
		h, err := mapping.New(context.Background(), src.Wasm, code, mapping.Memory(c.Store), mapping.Options{Call: answer, ABIs: src.ABIs, Network: network})
		if err != nil {
			c.t.Fatal(err)
		}
		c.t.Cleanup(h.Close)
		c.Hosts[ds] = h
	}
}

// Next starts a new block with one transaction from `from`.
func (c *Chain) Next(number, timestamp uint64, from common.Address) {
	c.Block = mapping.Block{Number: number, Timestamp: timestamp, Hash: crypto.Keccak256Hash(big.NewInt(int64(number)).Bytes())}
	c.Tx = mapping.Tx{Hash: crypto.Keccak256Hash([]byte{byte(number), byte(number >> 8), byte(len(c.Hosts))}), From: from}
	c.logIdx = 0
}

// Emit encodes the event of signature sig of ABI abiName with args in the
// ABI's order (indexed ones into topics), as contract addr would log it,
// and runs data source ds's handler on it. A handler's failure fails the
// test.
func (c *Chain) Emit(ds, abiName, sig, handler string, addr common.Address, args ...any) {
	c.t.Helper()
	var ev abi.Event
	found := false
	for _, e := range c.abi(abiName).Events {
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
	lg := types.Log{Address: addr, Topics: topics, Data: packed, Index: c.logIdx, TxHash: c.Tx.Hash}
	c.logIdx++
	h, ok := c.Hosts[ds]
	if !ok {
		c.t.Fatalf("no data source %s loaded", ds)
	}
	out, err := h.Handle(context.Background(), mapping.Trigger{Handler: handler, Event: ev, Log: lg, Block: c.Block, Tx: c.Tx})
	c.Logs[ds] = append(c.Logs[ds], out.Logs...)
	c.Created[ds] = append(c.Created[ds], out.Created...)
	if err != nil {
		c.t.Fatalf("%s %s: %v", ds, handler, err)
	}
}

// Big is the BigInt field fld of entity typ id, failing the test when the
// entity or the field is missing.
func (c *Chain) Big(typ, id, fld string) *big.Int {
	c.t.Helper()
	e := c.Store.Get(typ, id)
	if e == nil {
		c.t.Fatalf("no %s %s; have %v", typ, id, c.Store.All(typ))
	}
	v, err := e.BigInt(fld)
	if err != nil {
		c.t.Fatalf("%s %s: %v", typ, id, err)
	}
	return v
}

// WantBig reports an error unless the BigInt field fld of entity typ id
// is want.
func (c *Chain) WantBig(typ, id, fld string, want *big.Int) {
	c.t.Helper()
	if got := c.Big(typ, id, fld); got.Cmp(want) != 0 {
		c.t.Errorf("%s %s .%s = %s, want %s", typ, id, fld, got, want)
	}
}

// PositionID is a V2 handler's tokenId, computed here with go-ethereum's
// ABI encoder: keccak256(abi.encode(handler, pool, hook, tickLower, tickUpper)).
func PositionID(t testing.TB, handler, pool, hook common.Address, tl, tu int64) *big.Int {
	t.Helper()
	return hashWords(t, []string{"address", "address", "address", "int24", "int24"}, handler, pool, hook, big.NewInt(tl), big.NewInt(tu))
}

// PositionIDV1 is the V1 handler's tokenId as UniswapV3SingleTickLiquidityHandler
// derives it (getHandlerIdentifier, mintPositionHandler, burnPositionHandler):
// four words, no hook: keccak256(abi.encode(handler, pool, tickLower, tickUpper)).
func PositionIDV1(t testing.TB, handler, pool common.Address, tl, tu int64) *big.Int {
	t.Helper()
	return hashWords(t, []string{"address", "address", "int24", "int24"}, handler, pool, big.NewInt(tl), big.NewInt(tu))
}

// hashWords is keccak256 of vals ABI-encoded as the types named.
func hashWords(t testing.TB, typeNames []string, vals ...any) *big.Int {
	t.Helper()
	var args abi.Arguments
	for _, n := range typeNames {
		ty, err := abi.NewType(n, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, abi.Argument{Type: ty})
	}
	packed, err := args.Pack(vals...)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(crypto.Keccak256(packed))
}

// StrikeID is the id the mappings give a handler's range: handler, pool
// and hook in lower-case hex, then the ticks.
func StrikeID(handler, pool, hook common.Address, tl, tu int64) string {
	return strings.ToLower(handler.Hex()) + "-" + strings.ToLower(pool.Hex()) + "-" + strings.ToLower(hook.Hex()) +
		"-" + big.NewInt(tl).String() + "-" + big.NewInt(tu).String()
}
