// Package subgraphtest is a fake Graph Node for tests and fixture generation.
// It serves the gateway's own query documents (dispatching on operationName)
// from entities held in Go, applying the filters, ordering and pagination
// those documents ask for with Graph Node's semantics: BigInt and Bytes as
// strings, lowercase Bytes, `first` capped at 1000, errors in an HTTP 200.
// It counts requests and can be told to fail.
package subgraphtest

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Strike is a Strike entity. Addresses are lowercase hex.
type Strike struct {
	ID                string          `json:"id"`
	Handler           string          `json:"handler"`
	Pool              string          `json:"pool"`
	Hook              string          `json:"hook"`
	TickLower         int             `json:"tickLower"`
	TickUpper         int             `json:"tickUpper"`
	TotalLiquidity    string          `json:"totalLiquidity"`
	UsedLiquidity     string          `json:"usedLiquidity"`
	DailyDonations    []DailyDonation `json:"dailyDonations"`
	DailyFeeCompounds []DailyCompound `json:"dailyFeeCompounds"`
}

// DailyDonation is a DailyDonation entity (without its strike link).
type DailyDonation struct {
	Donation     string `json:"donation"`
	SqrtPriceX96 string `json:"sqrtPriceX96"`
	Start        int64  `json:"start"`
}

// DailyCompound is a DailyFeeCompound entity (without its strike link).
type DailyCompound struct {
	Compound     string `json:"compound"`
	SqrtPriceX96 string `json:"sqrtPriceX96"`
	Start        int64  `json:"start"`
}

// Exercise is an Exercise entity with its option, as ExerciseHistory selects it.
type Exercise struct {
	ID                 string          `json:"id"`
	Market             string          `json:"-"`
	User               string          `json:"-"`
	TxHash             string          `json:"txHash"`
	Timestamp          string          `json:"timestamp"`
	BlockNumber        string          `json:"blockNumber"`
	TotalProfit        string          `json:"totalProfit"`
	TotalAssetRelocked string          `json:"totalAssetRelocked"`
	SqrtPriceX96       string          `json:"sqrtPriceX96"`
	Exerciser          string          `json:"exerciser"`
	Delegated          bool            `json:"delegated"`
	ProfitToOwner      *string         `json:"profitToOwner"`
	Option             ExercisedOption `json:"option"`
}

// ExercisedOption is the nested option of an Exercise.
type ExercisedOption struct {
	TokenID       string `json:"tokenId"`
	IsCall        bool   `json:"isCall"`
	TickLower     int    `json:"tickLower"`
	TickUpper     int    `json:"tickUpper"`
	Expiry        string `json:"expiry"`
	Premium       string `json:"premium"`
	MintTimestamp string `json:"mintTimestamp"`
}

// Server is the fake Graph Node.
type Server struct {
	mu        sync.Mutex
	Block     uint64
	Timestamp int64
	Strikes   []Strike
	Exercises []Exercise
	Purchases []Purchase
	Options   []Option
	Markets   []Market
	// Fail, when set, is asked before each query; a non-nil answer is sent
	// instead of the data: an HTTP status (Status) or a GraphQL errors body.
	Fail func(operation string) *Failure
	// Rewrite, when set, is given each data answer as it would be sent and
	// sends what it returns instead: hostile answers (huge or negative
	// numbers, bodies of any size, fuzzed bytes) in Graph Node's framing.
	Rewrite func(operation string, body []byte) []byte

	requests atomic.Int64
	lastVars map[string]map[string]any
}

// LastVariables returns the variables of the last query with that operation name.
func (s *Server) LastVariables(operation string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastVars[operation]
}

// Failure describes how to fail one request.
type Failure struct {
	Status int      // HTTP status; 0 means 200 with Errors
	Errors []string // GraphQL error messages
	// RetryAfter, if set, is sent as the Retry-After header.
	RetryAfter string
	// Body, if set, is the raw body sent with Status (an error page).
	Body string
}

// Requests counts queries received.
func (s *Server) Requests() int64 { return s.requests.Load() }

type gqlRequest struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
}

// ServeHTTP answers one GraphQL POST.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	var req gqlRequest
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		writeErrors(w, "invalid GraphQL request")
		return
	}
	if s.Fail != nil {
		if f := s.Fail(req.OperationName); f != nil {
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			if f.Status != 0 {
				w.WriteHeader(f.Status)
				_, _ = w.Write([]byte(f.Body))
				return
			}
			writeErrors(w, f.Errors...)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastVars == nil {
		s.lastVars = map[string]map[string]any{}
	}
	s.lastVars[req.OperationName] = req.Variables
	var data map[string]any
	var err error
	switch req.OperationName {
	case "Strikes":
		data, err = s.strikes(req.Variables)
	case "ExerciseHistory":
		data, err = s.exerciseHistory(req.Variables)
	case "PurchaseHistory":
		data, err = s.purchaseHistory(req.Variables)
	case "PurchasePositions":
		data, err = s.purchasePositions(req.Variables)
	case "OptionMarkets":
		data, err = s.markets(req.Variables)
	case "Meta":
		data = map[string]any{}
	default:
		err = fmt.Errorf("unknown operation %q", req.OperationName)
	}
	if err != nil {
		writeErrors(w, err.Error())
		return
	}
	data["_meta"] = map[string]any{
		"block":             map[string]any{"number": s.Block, "timestamp": s.Timestamp},
		"hasIndexingErrors": false,
	}
	w.Header().Set("Content-Type", "application/json")
	body, _ := json.Marshal(map[string]any{"data": data})
	body = append(body, '\n') // as json.Encoder writes it, and the recordings hold
	if s.Rewrite != nil {
		// A rewritten answer is announced by Content-Length, as Graph
		// Node does for a body it has whole.
		body = s.Rewrite(req.OperationName, body)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	_, _ = w.Write(body)
}

func writeErrors(w http.ResponseWriter, msgs ...string) {
	errs := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		errs[i] = map[string]any{"message": m}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": errs})
}

func (s *Server) strikes(v map[string]any) (map[string]any, error) {
	first, err := firstVar(v)
	if err != nil {
		return nil, err
	}
	lo, err := intVar(v, "tickLowerMin")
	if err != nil {
		return nil, err
	}
	hi, err := intVar(v, "tickLowerMax")
	if err != nil {
		return nil, err
	}
	after, _ := v["after"].(string)
	pools := map[string]bool{}
	list, _ := v["pools"].([]any)
	for _, p := range list {
		ps, _ := p.(string)
		pools[strings.ToLower(ps)] = true
	}
	var out []Strike
	for _, st := range s.Strikes {
		total, _ := new(big.Int).SetString(st.TotalLiquidity, 10)
		if !pools[st.Pool] || st.TickLower < lo || st.TickLower > hi || total == nil || total.Sign() <= 0 || st.ID <= after {
			continue
		}
		out = append(out, limitDaily(st))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > first {
		out = out[:first]
	}
	if out == nil {
		out = []Strike{}
	}
	return map[string]any{"strikes": out}, nil
}

// limitDaily applies the document's nested (first: 2, orderBy: start, desc).
func limitDaily(st Strike) Strike {
	d := append([]DailyDonation(nil), st.DailyDonations...)
	sort.Slice(d, func(i, j int) bool { return d[i].Start > d[j].Start })
	if len(d) > 2 {
		d = d[:2]
	}
	c := append([]DailyCompound(nil), st.DailyFeeCompounds...)
	sort.Slice(c, func(i, j int) bool { return c[i].Start > c[j].Start })
	if len(c) > 2 {
		c = c[:2]
	}
	if d == nil {
		d = []DailyDonation{}
	}
	if c == nil {
		c = []DailyCompound{}
	}
	st.DailyDonations, st.DailyFeeCompounds = d, c
	return st
}

func (s *Server) exerciseHistory(v map[string]any) (map[string]any, error) {
	list, err := userPage(v, s.Exercises, func(e Exercise) (string, string, string, string) { return e.User, e.Market, e.Timestamp, e.ID })
	return map[string]any{"exercises": list}, err
}

// firstVar reads first with Graph Node's limit and error text.
func firstVar(v map[string]any) (int, error) {
	first, err := intVar(v, "first")
	if err == nil && (first < 0 || first > 1000) {
		err = fmt.Errorf("The `first` argument must be between 0 and 1000, but is %d", first)
	}
	return first, err
}

func intVar(v map[string]any, name string) (int, error) {
	f, ok := v[name].(float64)
	if !ok {
		return 0, fmt.Errorf("variable $%s of type Int! was not provided", name)
	}
	return int(f), nil
}

// Lock and Unlock guard entity changes made while serving.
func (s *Server) Lock()   { s.mu.Lock() }
func (s *Server) Unlock() { s.mu.Unlock() }
