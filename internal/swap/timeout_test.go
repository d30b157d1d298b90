package swap

import (
	"context"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// The quoters take their deadline from configuration: a zero one is
// refused, naming it, both by the constructors and by a literal's Quote,
// never replaced by a deadline of the quoter's own.
func TestZeroTimeoutIsRefused(t *testing.T) {
	t.Parallel()
	if q, err := NewUniV3(UniV3{}); q != nil || err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("NewUniV3 without Timeout: %v, %v", q, err)
	}
	if q, err := NewOneInch(OneInch{BaseURL: "http://1inch.invalid"}); q != nil || err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("NewOneInch without Timeout: %v, %v", q, err)
	}
	if q, err := NewUniV3(UniV3{Timeout: time.Second}); err != nil || q.Timeout != time.Second {
		t.Errorf("NewUniV3: %v, %v", q, err)
	}
	if q, err := NewOneInch(OneInch{Timeout: time.Second}); err != nil || q.Timeout != time.Second {
		t.Errorf("NewOneInch: %v, %v", q, err)
	}
	reqs := []Request{{AmountIn: big.NewInt(1)}}
	if _, err := (&UniV3{Quoter: common.Address{1}}).Quote(context.Background(), reqs); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("uni-v3 literal without Timeout: %v", err)
	}
	if _, err := (&OneInch{BaseURL: "http://1inch.invalid"}).Quote(context.Background(), reqs); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("1inch literal without Timeout: %v", err)
	}
}
