package trade

import (
	"log/slog"
	"sync"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// maxAddOnCauses bounds the causes remembered as logged: past it, a new
// cause is still logged, and forgotten (an upstream failing in ever new
// ways must not grow memory).
const maxAddOnCauses = 1024

// addOnLog logs the failures of a position's add-on reads (exercise
// value, auto-exerciser, delegates) that the answers only show in their
// `unknown` field: once per cause, so an operator learns that a chain's
// auto-exerciser does not answer without a line per request. A cause is
// the chain, the field and the error's code; the line carries the client's
// message (never upstream text or secrets: problem messages are written
// for clients).
type addOnLog struct {
	mu     sync.Mutex
	log    *slog.Logger
	logged map[addOnCause]bool
}

type addOnCause struct {
	chain uint64
	field string
	code  string
}

// LogTo sends the add-on failures' log lines to l (slog.Default until set).
func (s *Trade) LogTo(l *slog.Logger) {
	s.addOns.mu.Lock()
	defer s.addOns.mu.Unlock()
	s.addOns.log = l
}

// logAddOns logs each add-on read of one answer that failed (field to
// error; nil errors are reads that answered), once per cause.
func (s *Trade) logAddOns(up *vocab.Upstreams, market common.Address, failed map[string]error) {
	for _, field := range []string{"exerciseValue", "autoExercise", "delegates"} {
		if err := failed[field]; err != nil {
			s.addOns.once(up.Config.ID, market, field, err)
		}
	}
}

// firstValueErr is valuesErr, else the first option's value failure.
func firstValueErr(valuesErr error, values []valueOf) error {
	for _, v := range values {
		if valuesErr == nil && v.err != nil {
			valuesErr = v.err
		}
	}
	return valuesErr
}

func (a *addOnLog) once(chain uint64, market common.Address, field string, err error) {
	pe := problem.As(err)
	cause := addOnCause{chain: chain, field: field, code: pe.Code.Name()}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.logged[cause] {
		return
	}
	if a.logged == nil || len(a.logged) >= maxAddOnCauses {
		a.logged = map[addOnCause]bool{}
	}
	a.logged[cause] = true
	l := a.log
	if l == nil {
		l = slog.Default()
	}
	l.Warn("a position add-on read failed; answers leave it null with the reason in unknown (logged once per chain, field and code)",
		"chain", chain, "market", market.Hex(), "field", field, "code", cause.code, "reason", pe.Message)
}
