package contracts

import (
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// go-ethereum packs a *big.Int modulo 2^N: an approval of 2^256 + 5
// approves 5. PackChecked refuses it, naming the argument, however deep in
// the arguments it sits; the largest value of each type still packs.
func TestPackCheckedRefusesWhatTheTypeCannotHold(t *testing.T) {
	t.Parallel()
	two256 := new(big.Int).Lsh(big.NewInt(1), 256)
	past := new(big.Int).Add(two256, big.NewInt(5))
	wrapped, err := ERC20Approve.Pack("approve", common.Address{}, past)
	if err != nil || new(big.Int).SetBytes(wrapped[36:]).Int64() != 5 {
		t.Fatalf("go-ethereum no longer wraps (%v): PackChecked may be needless", err)
	}
	var re *RangeError
	if _, err := PackChecked(ERC20Approve, "approve", common.Address{}, past); !errors.As(err, &re) || re.Arg != "amount" || re.Value.Cmp(past) != 0 {
		t.Errorf("approve of 2^256+5: %v", err)
	}
	if _, err := PackChecked(ERC20Approve, "approve", common.Address{}, big.NewInt(-1)); !errors.As(err, &re) {
		t.Errorf("approve of -1: %v", err)
	}
	maxUint := new(big.Int).Sub(two256, big.NewInt(1))
	if _, err := PackChecked(ERC20Approve, "approve", common.Address{}, maxUint); err != nil {
		t.Errorf("approve of 2^256-1: %v", err)
	}

	type tick struct {
		Handler, Pool, Hook                  common.Address
		TickLower, TickUpper, LiquidityToUse *big.Int
	}
	mint := func(liquidity, allowance *big.Int, lower int64) error {
		arg := struct {
			OptionTicks      []tick
			TickLower        *big.Int
			TickUpper        *big.Int
			Ttl              *big.Int
			IsCall           bool
			MaxCostAllowance *big.Int
		}{[]tick{{TickLower: big.NewInt(lower), TickUpper: big.NewInt(10), LiquidityToUse: liquidity}}, big.NewInt(lower), big.NewInt(10), big.NewInt(3600), true, allowance}
		_, err := PackChecked(MintOption, "mintOption", arg)
		return err
	}
	if err := mint(big.NewInt(1), maxUint, -887272); err != nil {
		t.Errorf("mintOption at the bounds: %v", err)
	}
	if err := mint(big.NewInt(1), two256, -10); !errors.As(err, &re) || re.Arg != "_params.maxCostAllowance" {
		t.Errorf("maxCostAllowance 2^256: %v", err)
	}
	if err := mint(two256, big.NewInt(1), -10); !errors.As(err, &re) || re.Arg != "_params.optionTicks[0].liquidityToUse" {
		t.Errorf("liquidity 2^256: %v", err)
	}
	if err := mint(big.NewInt(1), big.NewInt(1), -(1<<23)-1); !errors.As(err, &re) || re.Type != "int24" {
		t.Errorf("tick below int24: %v", err)
	}
}
