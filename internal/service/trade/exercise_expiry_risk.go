package trade

import (
	"context"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// What an open option's owner should know as it nears expiry
// (ExpiryRisk.Status).
const (
	// StatusAutoExercise: in the money, and the owner made the chain's
	// auto-exerciser its delegate: it will be exercised in the last
	// minutes before expiry, less the auto-exerciser's fee.
	StatusAutoExercise = "autoExercise"
	// StatusExerciseBeforeExpiry: in the money, and no auto-exerciser
	// will act: the owner (or a delegate it chose) must exercise it before
	// expiry, or a settler keeps its value.
	StatusExerciseBeforeExpiry = "exerciseBeforeExpiry"
	// StatusOutOfTheMoney: exercising now would pay nothing.
	StatusOutOfTheMoney = "outOfTheMoney"
	// StatusExpired: expired; it can no longer be exercised, and a settler
	// will settle it.
	StatusExpired = "expired"
	// StatusUnknown: the gateway cannot value it (a V1 market's option),
	// or it is in the money and the auto-exerciser's read failed.
	StatusUnknown = "unknown"
)

// ExpiryRisk is what is at stake for an open option as it nears expiry
// and who will act (docs/api.md, "Expiry risk").
type ExpiryRisk struct {
	// TimeToExpiry is expiry minus the answer's block time, in seconds:
	// negative once expired.
	TimeToExpiry int64 `json:"timeToExpiry"`
	// InTheMoney: exercising now pays something (ExerciseValue > 0).
	InTheMoney bool `json:"inTheMoney"`
	// ExerciseValue is what exercising every leg now would pay, in the
	// profit token, as the prepared exercise computes it through
	// ExerciseSwapper: each leg's swap quoted, legs simulated in the
	// market's order from the owner, legs that would revert or add nothing
	// left out. "0" when nothing would pay; null when the chain has no
	// on-chain swapper to quote with (valueIfExercised then judges).
	ExerciseValue   *string `json:"exerciseValue"`
	ExerciseSwapper *string `json:"exerciseSwapper"`
	// AutoExercise is the chain's auto-exerciser and what it would do for
	// this option; null when the chain has none.
	AutoExercise *AutoExercise `json:"autoExercise"`
	// Delegates are every exercise delegate the owner has enabled on the
	// market (the auto-exerciser included), as indexed.
	Delegates []string `json:"delegates"`
	// Status is one plain word a wallet can show; StatusMessage says it
	// in a sentence with the times that matter.
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	Outcome       Outcome `json:"outcome"`
	// Unknown names each field left null because its read failed
	// (exerciseValue, exerciseSwapper, autoExercise, delegates), with the
	// reason; absent when every read answered. The position itself is
	// served either way: these are add-ons to it.
	Unknown map[string]string `json:"unknown,omitempty"`
}

// AutoExerciseTerms are an AutoExerciseTimeBased's terms at the answer's
// block: when it acts and what it may keep.
type AutoExerciseTerms struct {
	Exerciser string `json:"exerciser"`
	// Window is timeToSettle: its executors act only when at most this
	// many seconds are left before expiry.
	Window int64 `json:"window"`
	// FeeTo receives the executor's fee; zero: it takes none.
	FeeTo string `json:"feeTo"`
	// MaxExecutorFee / ExecutorFeePrecision is the largest share of the
	// profit an executor may keep (the contract's constants); MaxFeeShare
	// says it as a percentage, "0%" while FeeTo is zero.
	MaxExecutorFee       string `json:"maxExecutorFee"`
	ExecutorFeePrecision string `json:"executorFeePrecision"`
	MaxFeeShare          string `json:"maxFeeShare"`
}

// AutoExercise is the chain's AutoExerciseTimeBased as it stands for one
// option: its terms, whether the owner opted in, from when it may act and
// what it may keep of this option's exercise.
type AutoExercise struct {
	AutoExerciseTerms
	// OptedIn: the market's exerciseDelegator(owner, exerciser).
	OptedIn bool `json:"optedIn"`
	// From is expiry - Window (unix seconds).
	From string `json:"from"`
	// MaxFee is the most it may keep of ExerciseValue (0 while FeeTo is
	// zero); MinToOwner what the owner then receives at least.
	MaxFee     string `json:"maxFee"`
	MinToOwner string `json:"minToOwner"`
}

// riskInput is one open option whose risk is asked: its record (filled
// in), its position read at the answer's block and its fate as indexed.
type riskInput struct {
	rec  *PositionRecord
	id   *big.Int
	pos  *chain.Position
	fate subgraph.Fate
}

// valueConcurrency bounds how many options' exercises are quoted and
// simulated at once for one answer.
const valueConcurrency = 8

// riskReads are what a caller of expiryRisks has read or begun to read
// already: values, one per input, and the owners' enabled delegates
// (delegates is given the inputs' distinct owners and returns at least
// their enabled delegates, perhaps others' too, from a read made or begun
// earlier). What is nil is read by expiryRisks.
type riskReads struct {
	values    []valueOf
	delegates func(ctx context.Context, owners []common.Address) ([]subgraph.ExerciseDelegate, error)
}

// expiryRisks fills in each input's ExpiryRisk: the exercise value of
// those whose valueIfExercised is positive (quoted and simulated as the
// prepared exercise is, unless known), the auto-exerciser's parameters and
// the owners' opt-ins (one aggregate3) and their enabled delegates (one
// subgraph read, unless known), all at the answer's block.
//
// These are add-ons to the positions they describe (M32): a read of them
// that fails never fails the answer. Its fields are left null and
// ExpiryRisk.Unknown says which and why; a value that cannot be read
// falls back to valueIfExercised, as on a chain without a quote source.
func (s *Trade) expiryRisks(ctx context.Context, up *vocab.Upstreams, mk marketAt, ins []riskInput, known riskReads) error {
	if len(ins) == 0 {
		return nil
	}
	owners := distinctOwners(ins)
	values, readDelegates := known.values, known.delegates
	if readDelegates == nil {
		readDelegates = func(ctx context.Context, owners []common.Address) ([]subgraph.ExerciseDelegate, error) {
			return ownersDelegates(ctx, up, mk.addr, owners)
		}
	}
	var (
		ae                        *chain.AutoExerciser
		opted                     []bool
		dels                      []subgraph.ExerciseDelegate
		valuesErr, aeErr, delsErr error
		wg                        sync.WaitGroup
	)
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	if values == nil {
		run(func() { values, valuesErr = exerciseValues(ctx, up, mk, ins) })
	}
	run(func() { ae, opted, aeErr = autoExerciserView(ctx, up, mk.addr, owners) })
	run(func() { dels, delsErr = readDelegates(ctx, owners) })
	wg.Wait()
	if err := ctx.Err(); err != nil { // the client left: no answer to serve
		return err
	}
	unknown := unknownOf(valuesErr, aeErr, delsErr)
	if valuesErr != nil {
		values = make([]valueOf, len(ins))
	}
	s.logAddOns(up, mk.addr, map[string]error{"exerciseValue": firstValueErr(valuesErr, values), "autoExercise": aeErr, "delegates": delsErr})
	optedIn := map[common.Address]bool{}
	for i, o := range opted {
		optedIn[owners[i]] = o
	}
	delegates := map[common.Address][]string{}
	for _, d := range dels {
		delegates[d.Owner.Addr()] = append(delegates[d.Owner.Addr()], d.Delegate.Addr().Hex())
	}
	for i, in := range ins {
		owner := in.pos.Owner
		r := riskOf(in, values[i], ae, optedIn[owner], delegates[owner])
		if delsErr != nil {
			r.Delegates = nil
		}
		if aeErr != nil && r.Status == StatusExerciseBeforeExpiry {
			// Whether the chain's auto-exerciser will act is what failed
			// to be read: "must be exercised by you" would say it will not.
			r.Status, r.StatusMessage = StatusUnknown, "in the money: whether the chain's auto-exerciser will exercise it is unknown (its read failed: see unknown.autoExercise); exercise it yourself before expiry to be sure"
		}
		r.Unknown = withValueUnknown(unknown, values[i].err)
		in.rec.ExpiryRisk = r
	}
	return nil
}

// autoExerciserView is the chain's auto-exerciser (nil when it has none)
// and whether each owner opted in to it, in one aggregate3.
func autoExerciserView(ctx context.Context, up *vocab.Upstreams, market common.Address, owners []common.Address) (*chain.AutoExerciser, []bool, error) {
	qs := make([]chain.Delegation, 0, len(owners))
	if up.Config.AutoExerciser != (common.Address{}) {
		for _, o := range owners {
			qs = append(qs, chain.Delegation{Owner: o, Delegate: up.Config.AutoExerciser})
		}
	}
	return up.Chain.DelegateView(ctx, market, up.Config.AutoExerciser, qs)
}

// unknownOf is ExpiryRisk.Unknown for the add-on reads' errors: each
// field a failed read leaves null, and the reason; nil when all were read.
func unknownOf(valuesErr, aeErr, delsErr error) map[string]string {
	out := map[string]string{}
	if valuesErr != nil {
		why := "exercise value not computed (valueIfExercised judges): " + problem.As(valuesErr).Message
		out["exerciseValue"], out["exerciseSwapper"] = why, why
	}
	if aeErr != nil {
		out["autoExercise"] = "auto-exerciser not read: " + problem.As(aeErr).Message
	}
	if delsErr != nil {
		out["delegates"] = "delegates not read: " + problem.As(delsErr).Message
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// withValueUnknown is unknown with one option's value failure added (a
// copy: unknown is shared by the page's records).
func withValueUnknown(unknown map[string]string, err error) map[string]string {
	if err == nil {
		return unknown
	}
	out := maps.Clone(unknown)
	if out == nil {
		out = map[string]string{}
	}
	why := "exercise value not computed (valueIfExercised judges): " + problem.As(err).Message
	out["exerciseValue"], out["exerciseSwapper"] = why, why
	return out
}

// ownersDelegates is one subgraph read of the owners' enabled delegates
// on market.
func ownersDelegates(ctx context.Context, up *vocab.Upstreams, market common.Address, owners []common.Address) ([]subgraph.ExerciseDelegate, error) {
	dels, _, err := up.Subgraph.ExerciseDelegates(ctx, subgraph.DelegatesQuery{Market: market, Owners: owners, First: subgraph.MaxFirst})
	return dels, err
}

func distinctOwners(ins []riskInput) []common.Address {
	owners := make([]common.Address, len(ins))
	for i, in := range ins {
		owners[i] = in.pos.Owner
	}
	return sortedDistinct(owners)
}

// sortedDistinct is addrs without repeats, in address order (it sorts
// addrs in place).
func sortedDistinct(addrs []common.Address) []common.Address {
	slices.SortFunc(addrs, func(a, b common.Address) int { return a.Cmp(b) })
	return slices.Compact(addrs)
}

// valueOf is one option's exercise value: nil when not computed (the
// chain has no on-chain swapper), else the value and, when it is zero,
// why.
type valueOf struct {
	value   *big.Int
	swapper string
	why     string
	// err: this option's value could not be computed (its quote or
	// simulation failed upstream, or the quoter reverted): value is nil
	// and valueIfExercised judges, the reason in ExpiryRisk.Unknown.
	err error
}

// exerciseValues computes the exercise value of every input whose
// valueIfExercised is positive, valueConcurrency at a time; the others
// are worth nothing now (the value before price impact bounds the one
// after it). One option's value that fails leaves only that value
// unknown (valueOf.err); the error returned is the client's leaving.
func exerciseValues(ctx context.Context, up *vocab.Upstreams, mk marketAt, ins []riskInput) ([]valueOf, error) {
	out := make([]valueOf, len(ins))
	sid := valueSwapper(up)
	if sid == "" {
		return out, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(valueConcurrency)
	for i, in := range ins {
		out[i] = valueOf{value: new(big.Int), swapper: sid}
		if !in.rec.Exercisable {
			continue
		}
		g.Go(func() error {
			v, why, err := exerciseValue(gctx, up, sid, mk, in)
			out[i] = valueOf{value: v, swapper: sid, why: why, err: err}
			return ctx.Err()
		})
	}
	return out, g.Wait()
}

// valueSwapper is the swapperId whose quotes value an exercise: the first,
// by id, whose quoter reads the chain at the answer's block
// (swap.Quoter.OnChain: no API key or rate limit); "" when the chain has
// none.
func valueSwapper(up *vocab.Upstreams) string {
	var ids []string
	for id, q := range up.Quoters {
		if q != nil && q.OnChain() {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}

// exerciseValue is what exercising pos in full now pays, as
// ExercisePrepare computes it through swapper sid (its leg plan, quotes
// and sequential simulation from the owner) without building the
// transaction. What the prepared exercise would refuse as unprocessable
// (no route, a leg that reverts the whole exercise) is worth 0, and why;
// an upstream failure is an error.
func exerciseValue(ctx context.Context, up *vocab.Upstreams, sid string, mk marketAt, in riskInput) (*big.Int, string, error) {
	pos := in.pos
	p := &exercisePlan{req: PrepareRequest{ChainID: up.Config.ID, Market: mk.addr, OptionID: in.id, SwapperID: sid},
		up: up, quoter: up.Quoters[sid], info: mk.info, pos: pos}
	worthless := func(err error) (*big.Int, string, error) {
		if e := problem.As(err); e.Kind() == problem.KindUnprocessable {
			return new(big.Int), e.Message, nil
		}
		return nil, "", err
	}
	if err := p.planLegs(); err != nil {
		return worthless(err)
	}
	if len(p.quoteReqs) == 0 {
		return new(big.Int), "no leg holds collateral to swap", nil
	}
	if err := p.quote(ctx); err != nil {
		// The quote source failing, a revert included (a quoter that
		// cannot quote a swap the pool prices at valueIfExercised): the
		// value is unknown, not 0, and valueIfExercised judges.
		return nil, "", err
	}
	outcomes, err := up.Chain.SimulateSequence(ctx, pos.Owner, mk.addr, p.params)
	if err != nil {
		return worthless(simulationError(err))
	}
	total := new(big.Int)
	for _, o := range outcomes {
		if o.Exercised {
			total.Add(total, o.Delta)
		}
	}
	return total, "", nil
}

// riskOf assembles one option's risk from what was read.
func riskOf(in riskInput, v valueOf, ae *chain.AutoExerciser, optedIn bool, delegates []string) ExpiryRisk {
	r, pos := in.rec, in.pos
	expiry, now := pos.Data.Expiry, pos.BlockTimestamp
	left := new(big.Int).Sub(expiry, now)
	out := ExpiryRisk{TimeToExpiry: left.Int64(), Delegates: delegates, Outcome: outcomeOf(in.fate, nil, expiry, now.Int64())}
	if out.Delegates == nil {
		out.Delegates = []string{}
	}
	value := v.value
	if value == nil { // no on-chain swapper: the value before price impact judges
		value = r.valueBefore
		if value == nil { // a record not made by positionRecord
			value = new(big.Int)
		}
	} else {
		out.ExerciseValue, out.ExerciseSwapper = strPtr(value.String()), strPtr(v.swapper)
	}
	out.InTheMoney = r.Exercisable && value.Sign() > 0
	if ae != nil {
		out.AutoExercise = autoExerciseOf(ae, optedIn, expiry, value)
	}
	out.Status, out.StatusMessage = statusOf(in, out, v.why)
	return out
}

func autoExerciseOf(ae *chain.AutoExerciser, optedIn bool, expiry, value *big.Int) *AutoExercise {
	fee := new(big.Int)
	if ae.FeeTo != (common.Address{}) {
		fee.Mul(value, ae.MaxExecutorFee).Quo(fee, ae.FeePrecision)
	}
	return &AutoExercise{
		AutoExerciseTerms: termsOf(ae), OptedIn: optedIn, From: new(big.Int).Sub(expiry, ae.TimeToSettle).String(),
		MaxFee: fee.String(), MinToOwner: new(big.Int).Sub(value, fee).String(),
	}
}

// termsOf is the auto-exerciser's terms as the answers show them.
func termsOf(ae *chain.AutoExerciser) AutoExerciseTerms {
	share := "0%"
	if ae.FeeTo != (common.Address{}) {
		pct := new(big.Rat).SetFrac(new(big.Int).Mul(ae.MaxExecutorFee, big.NewInt(100)), ae.FeePrecision)
		share = strings.TrimSuffix(strings.TrimRight(pct.FloatString(4), "0"), ".") + "%"
	}
	return AutoExerciseTerms{Exerciser: ae.Address.Hex(), Window: ae.TimeToSettle.Int64(), FeeTo: ae.FeeTo.Hex(),
		MaxExecutorFee: ae.MaxExecutorFee.String(), ExecutorFeePrecision: ae.FeePrecision.String(), MaxFeeShare: share}
}

// statusOf is the option's status and its sentence.
func statusOf(in riskInput, r ExpiryRisk, why string) (string, string) {
	pos := in.pos
	at := time.Unix(pos.Data.Expiry.Int64(), 0).UTC().Format(time.RFC3339)
	switch {
	case r.TimeToExpiry < 0:
		return StatusExpired, fmt.Sprintf("expired at %s: it can no longer be exercised; a settler settles it and keeps what it is worth then", at)
	case pos.Version == chain.MarketV1:
		return StatusUnknown, in.rec.NotExercisableReason
	case !r.InTheMoney:
		reason := in.rec.NotExercisableReason
		if reason == "" {
			reason = why
		}
		if reason = strings.TrimPrefix(reason, "not in the money: "); reason == "" {
			reason = "exercising it now would pay nothing"
		}
		return StatusOutOfTheMoney, "out of the money: " + reason
	case r.AutoExercise != nil && r.AutoExercise.OptedIn:
		ae := r.AutoExercise
		return StatusAutoExercise, fmt.Sprintf("in the money: the auto-exerciser %s will exercise it in its last %d seconds (from %s to %s), keeping at most %s of the profit",
			ae.Exerciser, ae.Window, time.Unix(pos.Data.Expiry.Int64()-ae.Window, 0).UTC().Format(time.RFC3339), at, ae.MaxFeeShare)
	}
	msg := fmt.Sprintf("in the money: must be exercised by you before %s; left unexercised, a settler keeps its value after expiry", at)
	if len(r.Delegates) > 0 {
		msg += " (delegates you enabled may exercise it: " + strings.Join(r.Delegates, ", ") + ")"
	}
	return StatusExerciseBeforeExpiry, msg
}
