package protocoltest

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// Artifact is a contract's ABI and creation code.
type Artifact struct {
	Name     string
	ABI      abi.ABI
	Bytecode []byte
}

//go:embed sol/*.json
var solFS embed.FS

func parseArtifact(name string, raw []byte) (Artifact, error) {
	var a struct {
		ABI      json.RawMessage `json:"abi"`
		Bytecode string          `json:"bytecode"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return Artifact{}, fmt.Errorf("%s: %w", name, err)
	}
	parsed, err := abi.JSON(strings.NewReader(string(a.ABI)))
	if err != nil {
		return Artifact{}, fmt.Errorf("%s: %w", name, err)
	}
	return Artifact{Name: name, ABI: parsed, Bytecode: common.FromHex(a.Bytecode)}, nil
}

func mustOwn(name string) Artifact {
	raw, err := solFS.ReadFile("sol/" + name + ".json")
	if err != nil {
		panic(err)
	}
	a, err := parseArtifact(name, raw)
	if err != nil {
		panic(err)
	}
	return a
}

// The test protocol's compiled contracts (sol/*.json). Their ABIs are the
// real contracts' where the real ones have the function, event or error.
var (
	MarketV2        = mustOwn("TestOptionMarketV2")
	MarketV1        = mustOwn("TestOptionMarketV1")
	HandlerV1       = mustOwn("TestSingleTickHandlerV1")
	PositionManager = mustOwn("TestPositionManager")
	HandlerV2       = mustOwn("TestSingleTickHandlerV2")
	// The 2025 generation (DeployV3).
	PositionManagerV2 = mustOwn("TestPositionManagerV2")
	HandlerV3         = mustOwn("TestSingleTickHandlerV3")
	// PositionManagerV2Jan2025 is the position manager V2 as first
	// written (its withdrawReserveLiquidity reserves), DeployV3Jan2025.
	PositionManagerV2Jan2025 = mustOwn("TestPositionManagerV2Jan2025")
	SwapRouterSwap           = mustOwn("TestSwapRouterSwapper")
	OneInchSwap              = mustOwn("TestOneInchSwapper")
	OneInchRouter            = mustOwn("FakeAggregationRouterV5")
	TTLHook                  = mustOwn("TestBoundedTTLHook")
	AutoExercise             = mustOwn("TestAutoExerciseTimeBased")
	OpenSettlement           = mustOwn("TestOpenSettlement")
	Token                    = mustOwn("TestToken")
	OptionPricing            = mustOwn("TestOptionPricing")
	PricingLinearV2          = mustOwn("TestOptionPricingLinearV2")
	PricingV2                = mustOwn("TestOptionPricingV2")
	FeeStrategy              = mustOwn("TestFeeStrategy")
	WeekendHook              = mustOwn("TestWeekendHook")
	Multicall3               = mustOwn("TestMulticall3")
	// LimitOrdersC is the limit-orders contract (DeployLimitOrders).
	LimitOrdersC = mustOwn("LimitOrders")
)

// own lists every protocol artifact, for decoding errors and logs.
func own() []Artifact {
	return []Artifact{MarketV2, MarketV1, HandlerV1, PositionManager, HandlerV2, PositionManagerV2, PositionManagerV2Jan2025, HandlerV3, SwapRouterSwap, OneInchSwap, OneInchRouter, TTLHook, AutoExercise, OpenSettlement, Token, OptionPricing, PricingLinearV2, PricingV2, FeeStrategy, WeekendHook, LimitOrdersC}
}

// nodeModules is ../testdata/node_modules, found from this source file so
// any package's tests can deploy.
func nodeModules() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata", "node_modules")
}

var (
	uniOnce sync.Once
	uniArts map[string]Artifact
	uniErr  error
)

// Uniswap artifact paths under node_modules.
var uniPaths = map[string]string{
	"factory": "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
	"pool":    "@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
	"npm":     "@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json",
	"router":  "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json",
	"quoter":  "@uniswap/v3-periphery/artifacts/contracts/lens/QuoterV2.sol/QuoterV2.json",
}

// Uniswap returns a real Uniswap V3 artifact by key: factory, pool, npm,
// router, quoter.
func Uniswap(key string) (Artifact, error) {
	uniOnce.Do(func() {
		uniArts = map[string]Artifact{}
		for k, p := range uniPaths {
			raw, err := os.ReadFile(filepath.Join(nodeModules(), p))
			if errors.Is(err, fs.ErrNotExist) {
				uniErr = fmt.Errorf("internal/evmtest/testdata/node_modules lacks %s", p)
				return
			}
			if err != nil {
				uniErr = err
				return
			}
			a, err := parseArtifact(k, raw)
			if err != nil {
				uniErr = err
				return
			}
			uniArts[k] = a
		}
	})
	if uniErr != nil {
		return Artifact{}, uniErr
	}
	return uniArts[key], nil
}

var (
	errOnce  sync.Once
	errNames map[[4]byte]string
)

// errorName names revert data by its selector: Error(string) with its
// message, Panic(uint256) with its code, or a protocol custom error.
func errorName(data []byte) string {
	errOnce.Do(func() {
		errNames = map[[4]byte]string{}
		for _, a := range own() {
			for name, e := range a.ABI.Errors {
				var id [4]byte
				copy(id[:], e.ID[:4])
				errNames[id] = name
			}
		}
	})
	var sel [4]byte
	copy(sel[:], data[:4])
	if msg, err := abi.UnpackRevert(data); err == nil {
		return "Error(" + msg + ")"
	}
	return errNames[sel]
}
