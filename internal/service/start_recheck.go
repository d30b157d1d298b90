package service

import (
	"context"
	"log/slog"
	"time"
)

// Recheck is how often KeepChecking asks again: Every all the checks,
// and Failing the swapper check alone while a configured swapper fails
// it (or its probe went unanswered), Timeout bounding each round.
type Recheck struct {
	Every, Failing, Timeout time.Duration
}

// DefaultRecheck is the served binary's cadence: a node that answers
// empty data at start (still syncing, or a replica behind the swappers'
// deploy block: common when node and gateway start together) has a
// failing swapper chosen again by auto within half a minute of answering
// its code, and a settled configuration costs one round each 5 minutes.
var DefaultRecheck = Recheck{Every: 5 * time.Minute, Failing: 30 * time.Second}

// KeepChecking runs CheckContracts now and again on r's cadence until ctx
// ends: a verdict is the latest answer, so a swapper that failed because
// the node was behind is chosen again once a probe finds its code (and one
// whose code went away is left out). /readyz's contractChecks show the
// current findings.
func (s *Service) KeepChecking(ctx context.Context, log *slog.Logger, r Recheck) {
	round := func(all bool) {
		rctx, cancel := context.WithTimeout(ctx, r.Timeout)
		defer cancel()
		if all {
			s.CheckContracts(rctx, log)
		} else {
			s.recheckSwappers(rctx, log)
		}
	}
	round(true)
	var since time.Duration // since the last full round
	for {
		wait := r.Every - since
		if s.checks.swappersUnsettled() && r.Failing < wait {
			wait = r.Failing
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		since += wait
		full := since >= r.Every
		if full {
			since = 0
		}
		round(full)
	}
}
