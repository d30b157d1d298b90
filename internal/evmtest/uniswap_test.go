package evmtest

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

const modules = "testdata/node_modules"

// artifact is a Hardhat/Truffle build artifact: ABI and creation bytecode.
type artifact struct {
	ABI      abi.ABI
	Bytecode []byte
}

func load(t *testing.T, rel string) artifact {
	t.Helper()
	return loadFile(t, filepath.Join(modules, rel))
}

func loadFile(t *testing.T, file string) artifact {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v: run `npm ci` in internal/evmtest/testdata", err)
	}
	var a struct {
		ABI      json.RawMessage `json:"abi"`
		Bytecode string          `json:"bytecode"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatal(err)
	}
	parsed, err := abi.JSON(strings.NewReader(string(a.ABI)))
	if err != nil {
		t.Fatal(err)
	}
	return artifact{ABI: parsed, Bytecode: common.FromHex(a.Bytecode)}
}

// chain is a simulated EVM with one funded account.
type chain struct {
	t       *testing.T
	backend *simulated.Backend
	key     *ecdsa.PrivateKey
	from    common.Address
	opts    *bind.TransactOpts
}

func newChain(t *testing.T) *chain {
	key, _ := crypto.GenerateKey()
	from := crypto.PubkeyToAddress(key.PublicKey)
	eth := new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)
	b := simulated.NewBackend(types.GenesisAlloc{from: {Balance: eth}}, simulated.WithBlockGasLimit(60_000_000))
	t.Cleanup(func() { b.Close() })
	opts, err := bind.NewKeyedTransactorWithChainID(key, big.NewInt(1337))
	if err != nil {
		t.Fatal(err)
	}
	opts.GasLimit = 15_000_000
	return &chain{t: t, backend: b, key: key, from: from, opts: opts}
}

func (c *chain) deploy(a artifact, args ...any) (common.Address, *bind.BoundContract) {
	c.t.Helper()
	addr, _, bound, err := bind.DeployContract(c.opts, a.ABI, a.Bytecode, c.backend.Client(), args...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.backend.Commit()
	c.mined()
	return addr, bound
}

func (c *chain) send(bound *bind.BoundContract, method string, args ...any) {
	c.t.Helper()
	if _, err := bound.Transact(c.opts, method, args...); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	c.backend.Commit()
	c.mined()
}

// mined fails the test if the last block holds a failed transaction.
func (c *chain) mined() {
	c.t.Helper()
	ctx := context.Background()
	blk, err := c.backend.Client().BlockByNumber(ctx, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, tx := range blk.Transactions() {
		r, err := c.backend.Client().TransactionReceipt(ctx, tx.Hash())
		if err != nil || r.Status != types.ReceiptStatusSuccessful {
			c.t.Fatalf("transaction %s failed", tx.Hash())
		}
	}
}

func (c *chain) call(to common.Address, a abi.ABI, method string, args ...any) []any {
	c.t.Helper()
	data, err := a.Pack(method, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	out, err := c.backend.Client().CallContract(context.Background(), ethereumCall(c.from, to, data), nil)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	vals, err := a.Unpack(method, out)
	if err != nil {
		c.t.Fatal(err)
	}
	return vals
}

// rpcClient is the simulated node's own JSON-RPC client: the gateway's
// quoter talks to it exactly as it talks to a remote node.
// The backend wraps an *ethclient.Client in an embedded field named Client,
// which hides the method of that name: reach it through the field.
func (c *chain) rpcClient() *rpc.Client {
	ec := reflect.ValueOf(c.backend.Client()).FieldByName("Client").Interface().(*ethclient.Client)
	return ec.Client()
}

type uniswap struct {
	tokenA, tokenB common.Address // tokenA < tokenB
	pool           common.Address // the fee-500 pool of tokenA and tokenB
	quoter, router common.Address
	routerBound    *bind.BoundContract
	erc20          artifact
	boundA         *bind.BoundContract
}

const fee = 500

// deployUniswap deploys two ERC20s, the V3 factory, the position manager,
// QuoterV2 and SwapRouter, creates the fee-500 pool at price 1 and mints
// liquidity over [-600, 600].
func deployUniswap(t *testing.T, c *chain) uniswap {
	erc20 := load(t, "@openzeppelin/contracts/build/contracts/ERC20PresetMinterPauser.json")
	factoryArt := load(t, "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json")
	npmArt := load(t, "@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json")
	routerArt := load(t, "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json")
	quoterArt := load(t, "@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json")

	x, bx := c.deploy(erc20, "Wrapped Ether", "WETH")
	y, by := c.deploy(erc20, "USD Coin", "USDC")
	u := uniswap{erc20: erc20}
	u.tokenA, u.tokenB, u.boundA = x, y, bx
	boundB := by
	if strings.ToLower(y.Hex()) < strings.ToLower(x.Hex()) {
		u.tokenA, u.tokenB, u.boundA, boundB = y, x, by, bx
	}
	factory, _ := c.deploy(factoryArt)
	npm, npmBound := c.deploy(npmArt, factory, u.tokenA, common.Address{})
	u.router, u.routerBound = c.deploy(routerArt, factory, u.tokenA)
	u.quoter, _ = c.deploy(quoterArt, factory, u.tokenA)

	supply := new(big.Int).Exp(big.NewInt(10), big.NewInt(30), nil)
	for _, b := range []*bind.BoundContract{u.boundA, boundB} {
		c.send(b, "mint", c.from, supply)
		c.send(b, "approve", npm, supply)
		c.send(b, "approve", u.router, supply)
	}
	c.send(npmBound, "createAndInitializePoolIfNecessary", u.tokenA, u.tokenB, big.NewInt(fee), clamm.Q96)
	u.pool = c.call(factory, factoryArt.ABI, "getPool", u.tokenA, u.tokenB, big.NewInt(fee))[0].(common.Address)
	thousand := new(big.Int).Exp(big.NewInt(10), big.NewInt(21), nil)
	c.send(npmBound, "mint", struct {
		Token0         common.Address
		Token1         common.Address
		Fee            *big.Int
		TickLower      *big.Int
		TickUpper      *big.Int
		Amount0Desired *big.Int
		Amount1Desired *big.Int
		Amount0Min     *big.Int
		Amount1Min     *big.Int
		Recipient      common.Address
		Deadline       *big.Int
	}{u.tokenA, u.tokenB, big.NewInt(fee), big.NewInt(-600), big.NewInt(600), thousand, thousand, new(big.Int), new(big.Int), c.from, big.NewInt(1 << 40)})
	return u
}

func (c *chain) balance(u uniswap, token common.Address) *big.Int {
	return c.call(token, u.erc20.ABI, "balanceOf", c.from)[0].(*big.Int)
}

// The gateway's uni-v3 quote equals QuoterV2's answer, and its swapData
// drives a real exactInputSingle through SwapRouter that delivers at least
// amountOutMinimum (here exactly the quote, in the same block state); a
// minimum above the quote makes the real router revert.
func TestUniV3QuoteAndSwapDataAgainstRealContracts(t *testing.T) {
	c := newChain(t)
	u := deployUniswap(t, c)
	ctx := context.Background()
	slip, err := clamm.ParseSlippage("1", 50)
	if err != nil {
		t.Fatal(err)
	}
	amounts := []*big.Int{
		new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil),               // 1 token
		new(big.Int).Mul(big.NewInt(37), big.NewInt(1_000_000_000_000_000)), // 0.037
	}
	reqs := []swap.Request{
		{TokenIn: u.tokenA, TokenOut: u.tokenB, AmountIn: amounts[0], Fee: fee, Slippage: slip},
		{TokenIn: u.tokenB, TokenOut: u.tokenA, AmountIn: amounts[1], Fee: fee, Slippage: slip},
	}
	q := &swap.UniV3{RPC: c.rpcClient(), Quoter: u.quoter}
	quotes, err := q.Quote(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	quoterV2 := load(t, "@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json")
	for i, r := range reqs {
		direct := c.call(u.quoter, quoterV2.ABI, "quoteExactInputSingle", struct {
			TokenIn           common.Address
			TokenOut          common.Address
			AmountIn          *big.Int
			Fee               *big.Int
			SqrtPriceLimitX96 *big.Int
		}{r.TokenIn, r.TokenOut, r.AmountIn, big.NewInt(fee), new(big.Int)})[0].(*big.Int)
		if quotes[i].AmountOut.Cmp(direct) != 0 {
			t.Fatalf("leg %d: gateway quote %s, QuoterV2 %s", i, quotes[i].AmountOut, direct)
		}
		// Below the input (fee and a price of 1): a sanity bound on the quote.
		if direct.Sign() <= 0 || direct.Cmp(r.AmountIn) >= 0 {
			t.Fatalf("leg %d: quote %s for %s", i, direct, r.AmountIn)
		}
		// The minimum comes from the output the leg has in the exercise's
		// sequence (here: the quote itself); Final applies the slippage.
		if _, minOut, err := q.Final(r, quotes[i], direct); err != nil || minOut.Cmp(slip.MinOut(direct)) != 0 {
			t.Fatalf("leg %d: minOut %s (%v), want %s", i, minOut, err, slip.MinOut(direct))
		}
	}

	// Act as the SwapRouterSwapper: decode swapData, swap through the real
	// router. Each swap moves the price, so each leg is quoted afresh in the
	// state it swaps in.
	for i, r := range reqs {
		fresh, err := q.Quote(ctx, []swap.Request{r})
		if err != nil {
			t.Fatal(err)
		}
		quotes[i] = fresh[0]
		sd, _, err := q.Final(r, quotes[i], quotes[i].AmountOut)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := contracts.UniV3SwapData.Unpack(sd)
		if err != nil {
			t.Fatal(err)
		}
		swapFee, minOut := vals[0].(*big.Int), vals[1].(*big.Int)
		before := c.balance(u, r.TokenOut)
		c.send(u.routerBound, "exactInputSingle", exactInputSingle(r, swapFee, minOut, c.from))
		got := new(big.Int).Sub(c.balance(u, r.TokenOut), before)
		if got.Cmp(minOut) < 0 || got.Cmp(quotes[i].AmountOut) != 0 {
			t.Fatalf("leg %d: swap delivered %s; quote %s, minimum %s", i, got, quotes[i].AmountOut, minOut)
		}
	}

	// A fresh quote, then a minimum one unit above it: the router refuses.
	fresh, err := q.Quote(ctx, reqs[:1])
	if err != nil {
		t.Fatal(err)
	}
	tooHigh := new(big.Int).Add(fresh[0].AmountOut, big.NewInt(1))
	routerArt := load(t, "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json")
	input, _ := routerArt.ABI.Pack("exactInputSingle", exactInputSingle(reqs[0], big.NewInt(fee), tooHigh, c.from))
	_, err = c.backend.Client().CallContract(ctx, ethereumCall(c.from, u.router, input), nil)
	if err == nil || !strings.Contains(err.Error(), "Too little received") {
		t.Fatalf("minimum above the quote: %v", err)
	}
}

type exactInputSingleParams struct {
	TokenIn           common.Address
	TokenOut          common.Address
	Fee               *big.Int
	Recipient         common.Address
	Deadline          *big.Int
	AmountIn          *big.Int
	AmountOutMinimum  *big.Int
	SqrtPriceLimitX96 *big.Int
}

func exactInputSingle(r swap.Request, fee, minOut *big.Int, recipient common.Address) exactInputSingleParams {
	return exactInputSingleParams{r.TokenIn, r.TokenOut, fee, recipient, big.NewInt(1 << 40), r.AmountIn, minOut, new(big.Int)}
}
