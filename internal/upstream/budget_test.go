package upstream

import (
	"errors"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// When the budget is spent, every holder but the oldest fails at once and
// the oldest waits for what the others give back: no two holders wait on
// each other, and one of them always completes.
func TestBudgetOldestWaitsOthersFail(t *testing.T) {
	t.Parallel()
	b := NewBudget(100)
	older, younger := NewLease(), NewLease()
	if older.Charge(b, 60) != nil || younger.Charge(b, 30) != nil {
		t.Fatal("within the budget")
	}
	if err := younger.Charge(b, 20); !errors.Is(err, problem.ErrOverloaded) {
		t.Fatalf("younger holder over the budget: %v", err)
	}
	if err := NewLease().Charge(b, 20); !errors.Is(err, problem.ErrOverloaded) {
		t.Fatalf("a lease holding nothing: %v", err)
	}
	done := make(chan error)
	go func() { done <- older.Charge(b, 30) }() // waits for the younger's 30
	younger.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := older.Charge(b, 20); !errors.Is(err, problem.ErrOverloaded) {
		t.Fatalf("more than the whole budget can ever give: %v", err)
	}
	older.Release()
	if b.InUse() != 0 {
		t.Fatalf("%d in use after every release", b.InUse())
	}
}

// Reads of one fill charging at once share its own bound: of two charges
// that each fit alone but not together, one is refused as too large,
// however they interleave (the bound was checked on what the lease held
// before either, so both could pass).
func TestLeaseBoundHoldsUnderConcurrentCharges(t *testing.T) {
	t.Parallel()
	for range 2000 {
		b := NewBudget(1 << 20)
		l := NewLease()
		start := make(chan struct{})
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				<-start
				errs <- l.ChargeWithin(b, 60, 100)
			}()
		}
		close(start)
		e1, e2 := <-errs, <-errs
		if (e1 == nil) == (e2 == nil) {
			t.Fatalf("charges of 60 and 60 within 100: %v, %v", e1, e2)
		}
		if err := errors.Join(e1, e2); !errors.Is(err, problem.ErrTooLarge) {
			t.Fatalf("refused as %v, want too large", err)
		}
		l.Release()
		if b.InUse() != 0 {
			t.Fatalf("%d left charged after release", b.InUse())
		}
	}
}
