package scenario

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/math"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
)

// events are the contracts' events the history emits, from the subgraph's
// ABIs (subgraph/abis: the contracts' own), plus the token standards' the
// mappings read from receipts (ERC20 and ERC6909 Transfer).
type events struct {
	marketInit, mint, mintV1, exercise, nft abi.Event
	settle, delegate                        abi.Event
	updateAddress                           abi.Event
	whitelist, whitelistApp                 abi.Event
	minted, burned, mintedV1, burnedV1      abi.Event
	use, unuse, donation, feeCompound       abi.Event
	swap                                    abi.Event
}

var ev = loadEvents()

// packError is a log the history could not encode: a bug of this
// package, reported by replay as the scenario's error.
type packError struct{ err error }

func loadEvents() *events {
	get := func(file string) abi.ABI {
		a, err := mapping.ABI(file)
		if err != nil {
			// The ABIs are files of this repository; without them nothing
			// of the subgraph can be tested.
			panic(err)
		}
		return a
	}
	m2, m1, pm := get("DopexV2OptionMarketV2"), get("DopexV2OptionMarket"), get("DopexV2PositionManager")
	h2, h1, pool := get("UniswapV3SingleTickLiquidityHandlerV2"), get("UniswapV3SingleTickLiquidityHandler"), get("Pool")
	e := &events{
		marketInit: m2.Events["LogOptionsMarketInitialized"], mint: m2.Events["LogMintOption"], mintV1: m1.Events["LogMintOption"],
		exercise: m2.Events["LogExerciseOption"], nft: m2.Events["Transfer"], updateAddress: m2.Events["LogUpdateAddress"],
		settle: m2.Events["LogSettleOption"], delegate: m2.Events["LogUpdateExerciseDelegate"],
		whitelist: pm.Events["LogUpdateWhitelistHandler"], whitelistApp: pm.Events["LogUpdateWhitelistHandlerWithApp"],
		minted: h2.Events["LogMintedPosition"], burned: h2.Events["LogBurnedPosition"],
		mintedV1: h1.Events["LogMintedPosition"], burnedV1: h1.Events["LogBurnedPosition"],
		use: h2.Events["LogUsePosition"], unuse: h2.Events["LogUnusePosition"], donation: h2.Events["LogDonation"],
		feeCompound: h2.Events["LogFeeCompound"],
	}
	for _, s := range pool.Events {
		if len(s.Inputs) == 7 { // Uniswap's Swap (Pancake's has two more fields)
			e.swap = s
		}
	}
	return e
}

// word is a 32-byte ABI word of an address or an integer (two's
// complement for negatives).
func word(v any) []byte {
	switch x := v.(type) {
	case common.Address:
		return common.LeftPadBytes(x.Bytes(), 32)
	case *big.Int:
		return math.U256Bytes(new(big.Int).Set(x))
	}
	panic(packError{fmt.Errorf("no ABI word for %T", v)})
}

// log encodes one event of contract addr: indexed arguments as topics,
// the others as data.
func (e *events) log(addr common.Address, event abi.Event, args ...any) types.Log {
	if len(args) != len(event.Inputs) {
		panic(packError{fmt.Errorf("%s takes %d arguments, got %d", event.Sig, len(event.Inputs), len(args))})
	}
	topics := []common.Hash{event.ID}
	var data []any
	for i, in := range event.Inputs {
		if in.Indexed {
			topics = append(topics, common.BytesToHash(word(args[i])))
		} else {
			data = append(data, args[i])
		}
	}
	packed, err := event.Inputs.NonIndexed().Pack(data...)
	if err != nil {
		panic(packError{fmt.Errorf("%s: %w", event.Sig, err)})
	}
	return types.Log{Address: addr, Topics: topics, Data: packed}
}

var (
	erc20Transfer   = crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	erc6909Transfer = crypto.Keccak256Hash([]byte("Transfer(address,address,address,uint256,uint256)"))
	erc1155Transfer = crypto.Keccak256Hash([]byte("TransferSingle(address,address,address,uint256,uint256)"))
)

// erc20 is an ERC20 Transfer(from indexed, to indexed, amount) of token.
func (e *events) erc20(token, from, to common.Address, amount *big.Int) types.Log {
	return types.Log{Address: token, Topics: []common.Hash{erc20Transfer, common.BytesToHash(word(from)), common.BytesToHash(word(to))}, Data: word(amount)}
}

// share is a handler's share token moving: a mint is from zero, a burn to
// zero; the caller is the position manager. V2 handlers are ERC6909:
// Transfer(caller, from indexed, to indexed, id indexed, amount); the V1
// handler is OpenZeppelin's ERC1155: TransferSingle(operator indexed, from
// indexed, to indexed, id, value).
func (e *events) share(p *position, caller, from, to common.Address, amount *big.Int) types.Log {
	if p.v1 {
		return types.Log{Address: p.key.handler,
			Topics: []common.Hash{erc1155Transfer, common.BytesToHash(word(caller)), common.BytesToHash(word(from)), common.BytesToHash(word(to))},
			Data:   append(word(p.id), word(amount)...)}
	}
	return types.Log{Address: p.key.handler,
		Topics: []common.Hash{erc6909Transfer, common.BytesToHash(word(from)), common.BytesToHash(word(to)), common.BytesToHash(word(p.id))},
		Data:   append(word(caller), word(amount)...)}
}

// logs is its arguments, as a tx's build returns them.
func logs(l ...types.Log) ([]types.Log, error) { return l, nil }
