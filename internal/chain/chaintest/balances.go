package chaintest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// An ERC20's balances and allowances, as its balanceOf and allowance
// answer them: what a node's loader stated (a scenario's balances), 0 for
// anyone else. Nothing moves them but a probe's simulation, which changes
// a copy (spend.go): every other call is a read.

// SetBalance states holder's balance of the token.
func (t *Token) SetBalance(holder common.Address, amount *big.Int) {
	if t.Balances == nil {
		t.Balances = map[common.Address]*big.Int{}
	}
	t.Balances[holder] = new(big.Int).Set(amount)
}

// balanceOf is the token's balanceOf(holder); a nil token (an address the
// node has no token at) answers 0, as the reads treat a call to no code.
func (t *Token) balanceOf(holder common.Address) *big.Int {
	if t == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(orZero(t.Balances[holder]))
}

// allowance is the token's allowance(owner, spender).
func (t *Token) allowance(owner, spender common.Address) *big.Int {
	if t == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(orZero(t.Allowances[owner][spender]))
}
