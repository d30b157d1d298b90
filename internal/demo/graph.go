package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sort"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
)

// graph is the demo's subgraph: a small engine over the entities the
// recorded answers hold (every strike and exercise any recorded query
// returned), answering the gateway's own query documents by operation name
// with Graph Node's semantics: where filters on Bytes compare exactly,
// BigInt compares as numbers, orderBy/orderDirection, first at most 1000,
// skip at most 5000, argument errors as GraphQL errors in an HTTP 200.
// So any first/skip or reach gets an answer consistent with the recordings,
// not only the requests that were recorded.
type graph struct {
	meta    json.RawMessage // _meta of the recorded answers (one block)
	strikes []strikeEntity
	markets []marketEntity // by id
	// userLists holds, by operation name, the entities of the documents
	// that page through one user's entities on one market (userPages).
	userLists map[string][]exerciseEntity
}

// userPages are the documents that select one user's entities on one market
// (variables user and market, matched exactly), newest first by a BigInt
// field (ties by id), then skip and first: the list's field in data and
// the field it is ordered by.
var userPages = map[string]struct{ list, orderBy string }{
	"ExerciseHistory":   {"exercises", "timestamp"},
	"PurchaseHistory":   {"purchases", "timestamp"},
	"PurchasePositions": {"options", "mintTimestamp"},
}

type strikeEntity struct {
	id, pool  string
	tickLower int
	total     *big.Int
	raw       json.RawMessage // as recorded: the document's selection
}

type marketEntity struct {
	id  string
	raw json.RawMessage
}

type exerciseEntity struct {
	id, user, market string
	timestamp        *big.Int
	raw              json.RawMessage
}

type gqlRequest struct {
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
}

// newGraph loads the entities of the recorded Strikes and userPages
// answers (the user and market of an entity from its query's variables).
func newGraph(recorded []replay.Exchange) (*graph, error) {
	g := &graph{userLists: map[string][]exerciseEntity{}}
	seenStrike, seenUser, seenMarket := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, x := range recorded {
		var req gqlRequest
		var resp struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		if json.Unmarshal(x.Request, &req) != nil || json.Unmarshal(x.Response, &resp) != nil || resp.Data == nil {
			continue // not an answer with data: nothing to learn
		}
		if m := resp.Data["_meta"]; m != nil {
			g.meta = m
		}
		switch req.OperationName {
		case "Strikes":
			var list []json.RawMessage
			if err := json.Unmarshal(resp.Data["strikes"], &list); err != nil {
				return nil, fmt.Errorf("recorded strikes: %w", err)
			}
			for _, raw := range list {
				var s struct {
					ID             string `json:"id"`
					Pool           string `json:"pool"`
					TickLower      int    `json:"tickLower"`
					TotalLiquidity string `json:"totalLiquidity"`
				}
				total, ok := new(big.Int), false
				if json.Unmarshal(raw, &s) == nil {
					total, ok = total.SetString(s.TotalLiquidity, 10)
				}
				if !ok {
					return nil, fmt.Errorf("recorded strike %s does not decode", raw)
				}
				if !seenStrike[s.ID] {
					seenStrike[s.ID] = true
					g.strikes = append(g.strikes, strikeEntity{id: s.ID, pool: s.Pool, tickLower: s.TickLower, total: total, raw: raw})
				}
			}
		}
		if req.OperationName == "OptionMarkets" {
			var list []json.RawMessage
			if err := json.Unmarshal(resp.Data["markets"], &list); err != nil {
				return nil, fmt.Errorf("recorded markets: %w", err)
			}
			for _, raw := range list {
				var m struct {
					ID string `json:"id"`
				}
				if json.Unmarshal(raw, &m) != nil || m.ID == "" {
					return nil, fmt.Errorf("recorded market %s does not decode", raw)
				}
				if !seenMarket[m.ID] {
					seenMarket[m.ID] = true
					g.markets = append(g.markets, marketEntity{id: m.ID, raw: raw})
				}
			}
		}
		if page, ok := userPages[req.OperationName]; ok {
			user, _ := req.Variables["user"].(string)
			market, _ := req.Variables["market"].(string)
			var list []json.RawMessage
			if err := json.Unmarshal(resp.Data[page.list], &list); err != nil {
				return nil, fmt.Errorf("recorded %s: %w", page.list, err)
			}
			for _, raw := range list {
				var e map[string]any
				ts, ok := new(big.Int), false
				if json.Unmarshal(raw, &e) == nil {
					v, _ := e[page.orderBy].(string)
					ts, ok = ts.SetString(v, 10)
				}
				id, _ := e["id"].(string)
				if !ok {
					return nil, fmt.Errorf("recorded %s entity %s does not decode", page.list, raw)
				}
				if key := req.OperationName + "/" + id; !seenUser[key] {
					seenUser[key] = true
					g.userLists[req.OperationName] = append(g.userLists[req.OperationName], exerciseEntity{id: id, user: user, market: market, timestamp: ts, raw: raw})
				}
			}
		}
	}
	if g.meta == nil {
		return nil, fmt.Errorf("no recorded answer names the subgraph's block")
	}
	sort.Slice(g.markets, func(i, j int) bool { return g.markets[i].id < g.markets[j].id })
	return g, nil
}

// RoundTrip implements http.RoundTripper.
func (g *graph) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	var req gqlRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return graphAnswer(r, nil, "invalid GraphQL request")
	}
	data := map[string]any{"_meta": g.meta}
	switch req.OperationName {
	case "Strikes":
		list, err := g.strikesPage(req.Variables)
		if err != nil {
			return graphAnswer(r, nil, err.Error())
		}
		data["strikes"] = list
	case "OptionMarkets":
		list, err := g.marketsPage(req.Variables)
		if err != nil {
			return graphAnswer(r, nil, err.Error())
		}
		data["markets"] = list
	case "Meta":
	default:
		page, ok := userPages[req.OperationName]
		if !ok { // a replaced query document the demo knows nothing about
			return nil, fmt.Errorf("demo subgraph: operation %q: %w", req.OperationName, problem.ErrNotRecorded)
		}
		list, err := userPage(g.userLists[req.OperationName], req.Variables)
		if err != nil {
			return graphAnswer(r, nil, err.Error())
		}
		data[page.list] = list
	}
	return graphAnswer(r, data, "")
}

// marketsPage is the OptionMarkets document: id_gt after, orderBy id asc,
// first (each market as recorded, with its nested days).
func (g *graph) marketsPage(v map[string]any) ([]json.RawMessage, error) {
	first, err := intArg(v, "first", 1000)
	if err != nil {
		return nil, err
	}
	after, _ := v["after"].(string)
	out := []json.RawMessage{}
	for _, m := range g.markets {
		if m.id > after && len(out) < first {
			out = append(out, m.raw)
		}
	}
	return out, nil
}

// strikesPage is the Strikes document: pool_in, tickLower_gte/_lte,
// totalLiquidity_gt "0", id_gt after, orderBy id asc, first.
func (g *graph) strikesPage(v map[string]any) ([]json.RawMessage, error) {
	first, err := intArg(v, "first", 1000)
	if err != nil {
		return nil, err
	}
	lo, err := intArg(v, "tickLowerMin", -1)
	if err != nil {
		return nil, err
	}
	hi, err := intArg(v, "tickLowerMax", -1)
	if err != nil {
		return nil, err
	}
	after, _ := v["after"].(string)
	pools := map[string]bool{}
	list, _ := v["pools"].([]any)
	for _, p := range list {
		ps, _ := p.(string)
		pools[ps] = true // Bytes compare exactly: the gateway sends lowercase
	}
	var hits []strikeEntity
	for _, s := range g.strikes {
		if pools[s.pool] && s.tickLower >= lo && s.tickLower <= hi && s.total.Sign() > 0 && s.id > after {
			hits = append(hits, s)
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].id < hits[j].id })
	out := make([]json.RawMessage, 0, min(first, len(hits)))
	for _, s := range hits[:min(first, len(hits))] {
		out = append(out, s.raw)
	}
	return out, nil
}

// userPage answers a userPages document: user and market exactly, newest
// first (ties by id, as Graph Node's secondary order), skip, first.
func userPage(all []exerciseEntity, v map[string]any) ([]json.RawMessage, error) {
	first, err := intArg(v, "first", 1000)
	if err != nil {
		return nil, err
	}
	skip, err := intArg(v, "skip", 5000)
	if err != nil {
		return nil, err
	}
	user, _ := v["user"].(string)
	market, _ := v["market"].(string)
	var hits []exerciseEntity
	for _, e := range all {
		if e.user == user && e.market == market {
			hits = append(hits, e)
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		if c := hits[i].timestamp.Cmp(hits[j].timestamp); c != 0 {
			return c > 0
		}
		return hits[i].id < hits[j].id
	})
	hits = hits[min(skip, len(hits)):]
	hits = hits[:min(first, len(hits))]
	out := make([]json.RawMessage, len(hits))
	for i, e := range hits {
		out[i] = e.raw
	}
	return out, nil
}

// intArg reads an Int! variable; max >= 0 bounds it to [0, max] as Graph
// Node bounds first and skip.
func intArg(v map[string]any, name string, max int) (int, error) {
	f, ok := v[name].(float64)
	if !ok || f != float64(int(f)) {
		return 0, fmt.Errorf("variable $%s of type Int! was not provided", name)
	}
	n := int(f)
	if max >= 0 && (n < 0 || n > max) {
		return 0, fmt.Errorf("The `%s` argument must be between 0 and %d, but is %d", name, max, n)
	}
	return n, nil
}

// graphAnswer is Graph Node's answer: data, or errors, in an HTTP 200.
func graphAnswer(r *http.Request, data map[string]any, errMsg string) (*http.Response, error) {
	if errMsg != "" {
		return replay.JSONAnswer(r, map[string]any{"errors": []map[string]string{{"message": errMsg}}})
	}
	return replay.JSONAnswer(r, map[string]any{"data": data})
}
