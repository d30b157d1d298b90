package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Market contract versions; they differ in the OptionTicks struct (V1 has no hook).
const (
	MarketV1 = 1
	MarketV2 = 2
)

// speculativeLegs is how many opTickMap entries the first round asks for
// before it knows opTickArrayLen: options rarely have more, so one round
// usually reads the whole position. Failing extra calls cost nothing.
const speculativeLegs = 8

// The reads of Position's first round, by name: its index in the batch.
const (
	posOwner     = iota // ownerOf(optionId)
	posOpData           // opData(optionId)
	posName             // name(), which tells V1 from V2 when there is no leg
	posTimestamp        // Multicall3 getCurrentBlockTimestamp
	posFirstLeg         // opTickMap(optionId, 0), then the next speculativeLegs-1
)

// MaxLegs bounds how many legs the gateway will read for one option.
const MaxLegs = 64

// OptionData is opData(optionId).
type OptionData struct {
	OpTickArrayLen uint64
	TickLower      int
	TickUpper      int
	Expiry         *big.Int
	IsCall         bool
}

// OptionLeg is opTickMap(optionId, i) of a V2 market.
type OptionLeg struct {
	Handler        common.Address
	Pool           common.Address
	Hook           common.Address
	TickLower      int
	TickUpper      int
	LiquidityToUse *big.Int
}

// Position is everything about an option the exercise needs.
type Position struct {
	Owner          common.Address
	Data           OptionData
	Legs           []OptionLeg
	Version        int
	BlockTimestamp *big.Int // of the block the reads came from
}

// Position reads an option in one batched round (two when it has more than
// speculativeLegs legs): ownerOf, opData, name, the block timestamp and the
// first opTickMap entries. A burnt or unknown id answers OPTION_NOT_FOUND.
func (r *Reader) Position(ctx context.Context, market common.Address, optionID *big.Int) (*Position, error) {
	m := contracts.OptionMarketV2
	calls := make([]Call, posFirstLeg, posFirstLeg+speculativeLegs)
	calls[posOwner] = Call{market, pack(m, "ownerOf", optionID)}
	calls[posOpData] = Call{market, pack(m, "opData", optionID)}
	calls[posName] = Call{market, pack(m, "name")}
	calls[posTimestamp] = Call{r.multicall, pack(contracts.Multicall3, "getCurrentBlockTimestamp")}
	for i := 0; i < speculativeLegs; i++ {
		calls = append(calls, Call{market, pack(m, "opTickMap", optionID, big.NewInt(int64(i)))})
	}
	res, err := r.aggregateFirst(ctx, calls) // a prepared exercise's first read: it learns the answer's block
	if err != nil {
		return nil, err
	}
	p, err := decodePosition(market, optionID, positionReads{res[posOwner], res[posOpData], res[posName], res[posTimestamp], res[posFirstLeg:]})
	if err != nil || p.Version == MarketV1 || len(p.Legs) == int(p.Data.OpTickArrayLen) {
		return p, err // the caller refuses V1 before it needs legs
	}
	more := moreLegCalls(market, optionID, p.Data.OpTickArrayLen, speculativeLegs)
	extra, err := r.AggregateResults(ctx, more)
	if err != nil {
		return nil, err
	}
	return p, p.addLegs(optionID, speculativeLegs, extra)
}

// positionReads are the answers of an option's first round.
type positionReads struct {
	owner, opData, name, ts Result
	legs                    []Result
}

// decodePosition decodes an option's first-round reads: ownerOf, opData,
// the market's name, the block timestamp and the first opTickMap entries
// (all of its legs when it has no more than len(legs)). A burnt or unknown
// id is OPTION_NOT_FOUND.
func decodePosition(market common.Address, optionID *big.Int, rd positionReads) (*Position, error) {
	m := contracts.OptionMarketV2
	owner, opData, name, ts, legs := rd.owner, rd.opData, rd.name, rd.ts, rd.legs
	if !opData.OK || !ts.OK {
		return nil, notAMarket(market, errors.New("opData or block timestamp failed"))
	}
	if !owner.OK {
		return nil, problem.New(problem.OptionNotFound, "option %s does not exist on market %s (never minted, or burnt)", optionID, market.Hex()).On("optionId")
	}
	p := &Position{}
	var err error
	if p.Owner, err = unpackAddress(m, "ownerOf", owner.Data); err != nil {
		return nil, notAMarket(market, err)
	}
	if p.BlockTimestamp, err = unpackOne[*big.Int](contracts.Multicall3, "getCurrentBlockTimestamp", ts.Data); err != nil {
		return nil, upstreamGarbage(err)
	}
	if p.Data, err = decodeOpData(opData.Data); err != nil {
		return nil, unsupportedOpData(market, optionID, opData.Data, err)
	}
	var first Result
	if len(legs) > 0 {
		first = legs[0]
	}
	p.Version = marketVersion(name, first)
	if p.Version == MarketV1 {
		return p, nil
	}
	n := p.Data.OpTickArrayLen
	if n > MaxLegs {
		return nil, problem.New(problem.OptionTooManyLegs, "option %s has %d legs; at most %d are supported", optionID, n, MaxLegs)
	}
	return p, p.addLegs(optionID, 0, legs[:min(uint64(len(legs)), n)])
}

// moreLegCalls reads an option's legs from index from to n.
func moreLegCalls(market common.Address, optionID *big.Int, n uint64, from int) []Call {
	more := make([]Call, 0, n-uint64(from))
	for i := uint64(from); i < n; i++ {
		more = append(more, Call{market, pack(contracts.OptionMarketV2, "opTickMap", optionID, new(big.Int).SetUint64(i))})
	}
	return more
}

// addLegs decodes opTickMap answers for legs from, from+1, ...
func (p *Position) addLegs(optionID *big.Int, from int, res []Result) error {
	for j, r := range res {
		i := from + j
		if !r.OK {
			return upstreamGarbage(fmt.Errorf("opTickMap(%s, %d) reverted below opTickArrayLen %d", optionID, i, p.Data.OpTickArrayLen))
		}
		leg, err := decodeLeg(r.Data)
		if err != nil {
			return upstreamGarbage(fmt.Errorf("opTickMap(%s, %d): %w", optionID, i, err))
		}
		p.Legs = append(p.Legs, leg)
	}
	return nil
}

// marketVersion tells V1 from V2 by the size of an opTickMap answer (V2's
// OptionTicks has six static fields, V1's five) and, when there is no leg
// to look at, by name(): "Dopex V2 Option Market" is V1, "... V2" is V2.
func marketVersion(name, firstLeg Result) int {
	if firstLeg.OK {
		switch len(firstLeg.Data) {
		case 6 * 32:
			return MarketV2
		case 5 * 32:
			return MarketV1
		}
	}
	if name.OK {
		if s, err := unpackOne[string](contracts.OptionMarketV2, "name", name.Data); err == nil {
			if strings.HasSuffix(strings.TrimSpace(s), "V2 Option Market") {
				return MarketV1
			}
		}
	}
	return MarketV2
}

// maxTick is Uniswap's MAX_TICK: a tick word outside +-maxTick is not a tick.
const maxTick = 887272

// decodeOpData decodes opData as V1 and V2 markets lay it out:
// (uint256 opTickArrayLen, int24 tickLower, int24 tickUpper, uint256 expiry,
// bool isCall). The ABI decoder alone accepts any five words whose third
// and second fit an int24, so the tick words are also held to the tick
// range and isCall to 0 or 1: OptionMarketOTMFE's opData, (opTickArrayLen,
// expiry, tickLower, tickUpper, isCall), puts a timestamp where tickLower
// belongs and is refused here instead of being read with a wrong expiry.
func decodeOpData(raw []byte) (OptionData, error) {
	if len(raw) != 5*32 {
		return OptionData{}, fmt.Errorf("opData answered %d bytes, not the 5 words of (opTickArrayLen, tickLower, tickUpper, expiry, isCall)", len(raw))
	}
	for _, w := range []int{1, 2} {
		v := new(big.Int).SetBytes(raw[w*32 : (w+1)*32])
		if raw[w*32]&0x80 != 0 {
			v.Sub(v, new(big.Int).Lsh(big.NewInt(1), 256))
		}
		if v.CmpAbs(big.NewInt(maxTick)) > 0 {
			return OptionData{}, fmt.Errorf("opData word %d is %s, outside the tick range [-%d, %d]", w, v, maxTick, maxTick)
		}
	}
	if b := new(big.Int).SetBytes(raw[4*32:]); b.Cmp(big.NewInt(1)) > 0 {
		return OptionData{}, fmt.Errorf("opData word 4 is %s, not a bool", b)
	}
	vals, err := contracts.OptionMarketV2.Unpack("opData", raw)
	if err != nil {
		return OptionData{}, err
	}
	n := vals[0].(*big.Int)
	if !n.IsUint64() {
		return OptionData{}, fmt.Errorf("opTickArrayLen %s", n)
	}
	return OptionData{
		OpTickArrayLen: n.Uint64(),
		TickLower:      int(vals[1].(*big.Int).Int64()),
		TickUpper:      int(vals[2].(*big.Int).Int64()),
		Expiry:         vals[3].(*big.Int),
		IsCall:         vals[4].(bool),
	}, nil
}

func decodeLeg(raw []byte) (OptionLeg, error) {
	vals, err := contracts.OptionMarketV2.Unpack("opTickMap", raw)
	if err != nil {
		return OptionLeg{}, err
	}
	return OptionLeg{
		Handler:        vals[0].(common.Address),
		Pool:           vals[1].(common.Address),
		Hook:           vals[2].(common.Address),
		TickLower:      int(vals[3].(*big.Int).Int64()),
		TickUpper:      int(vals[4].(*big.Int).Int64()),
		LiquidityToUse: vals[5].(*big.Int),
	}, nil
}

// unsupportedOpData is a market whose opData is not V1/V2's: 422
// MARKET_UNSUPPORTED naming what was found, since exercising it with V2
// calldata would at best revert (OTMFE has no exerciseOption at all).
func unsupportedOpData(market common.Address, optionID *big.Int, raw []byte, err error) error {
	shape := "it is not a V1/V2 DopexV2OptionMarket"
	if len(raw) == 5*32 && new(big.Int).SetBytes(raw[32:64]).Cmp(big.NewInt(maxTick)) > 0 {
		shape = fmt.Sprintf("its second word (%s) reads as an expiry, as in Stryke's OptionMarketOTMFE (opData = opTickArrayLen, expiry, tickLower, tickUpper, isCall; no exerciseOption)",
			new(big.Int).SetBytes(raw[32:64]))
	}
	return problem.Wrap(problem.MarketUnsupported, err, "%s answers opData(%s) in a layout this gateway cannot exercise: %v; %s", market.Hex(), optionID, err, shape).On("optionMarket")
}
