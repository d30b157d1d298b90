package gateway

import (
	"math"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Parameters the hosted API's clients send to routes this gateway already
// serves (docs/api.md, "Parameters the hosted clients send"): understood,
// not refused as unknown.

// has says whether the query names the parameter at all.
func (p *params) given(name string) bool {
	_, n, _ := p.lookup(name)
	return n > 0
}

// filterDeprecated reads the strikes chain's optional filterDeprecated
// (stryke-fe sends true): true leaves out the strikes of handlers the
// registry marks deprecated; absent or false keeps the answer as before.
func (p *params) filterDeprecated() (bool, error) {
	if !p.given("filterDeprecated") {
		return false, nil
	}
	return p.boolean("filterDeprecated")
}

// hostedUser reads a quote's user: absent, or the text "undefined" that
// stryke-fe's template URL sends with no wallet connected, is the zero
// address (a quote from nobody in particular); anything else must be an
// address.
func (p *params) hostedUser() (common.Address, error) {
	if v, n, err := p.lookup("user"); err == nil && (n == 0 || (n == 1 && v == "undefined")) {
		return common.Address{}, nil
	}
	return p.address("user")
}

// markPrice reads the quote's optional markPrice (stryke-fe sends the
// mark price it shows): it must be a finite number, and is otherwise
// ignored. The quote prices at the market's own price at the answer's
// block, which is what mintOption charges; a client's displayed price is
// a few seconds old, and refusing a quote whenever the two differ would
// fail the frontend's quotes every time the price moved.
func (p *params) markPrice() error {
	if !p.given("markPrice") {
		return nil
	}
	v, err := p.one("markPrice")
	if err != nil {
		return err
	}
	if f, err := strconv.ParseFloat(v, 64); err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return problem.InvalidParam("markPrice", "markPrice must be a non-negative number (it is accepted and not used: the quote prices at the market's own price)")
	}
	return nil
}
