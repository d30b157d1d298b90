package upstream

import (
	"context"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Admission lets max fills run at once and answers the next OVERLOADED at
// once; releasing a lease frees its slot exactly once, however often it is
// released, and the lease rides on the fill's context for the transports.
func TestAdmission(t *testing.T) {
	t.Parallel()
	a := NewAdmission(2)
	ctx1, l1, err := a.Admit(context.Background())
	if err != nil || leaseFrom(ctx1) != l1 {
		t.Fatalf("first fill: %v", err)
	}
	_, l2, err := a.Admit(context.Background())
	if err != nil {
		t.Fatalf("second fill: %v", err)
	}
	if _, _, err := a.Admit(context.Background()); !overloaded(err) {
		t.Fatalf("third fill over a bound of 2: %v", err)
	}
	l1.Release()
	l1.Release()
	if _, _, err := a.Admit(context.Background()); err != nil {
		t.Fatalf("a slot was released: %v", err)
	}
	if _, _, err := a.Admit(context.Background()); !overloaded(err) {
		t.Fatalf("a second release freed a second slot: %v", err)
	}
	l2.Release()
}

func overloaded(err error) bool { return err != nil && problem.As(err).Code == problem.Overloaded }
