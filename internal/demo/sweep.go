package demo

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The demo answers every valid request about what it holds by recording
// a generated sweep of them (docs/development.md, "The demo"): the sweep
// varies each parameter of each route over the values below, which are
// what the demo's scenario holds (its market, users, options, strikes,
// ranges and blocks), and the generator records the upstream answers of
// every request of it. Sweep is built from the routes of the gateway's
// endpoint table, so a new route joins it, and a route with a parameter
// the sweep has no values for is an error that names it.

// Route is one operation of the endpoint table as the sweep needs it.
type Route struct {
	Path     string
	Params   []string
	Optional []string
}

// Dim is a set of parameters varied together (a strike and its type, a
// range's two ticks), with the values the sweep gives them: one tuple
// per request, in the order of Names; an empty value leaves the parameter
// out. Cross dimensions are combined with each other in full (every user
// with every page); the others are varied one at a time, the rest at
// their first tuple.
type Dim struct {
	Names  []string
	Values [][]string
	Cross  bool
}

// Addresses of what the demo holds.
const (
	Market     = "0x501B03BdB431154b8Df17BF1c00756E3a8F21744"
	Alice      = "0xA11CE00000000000000000000000000000000001"
	Bob        = "0xB0B0000000000000000000000000000000000002"
	Carol      = "0xCA20100000000000000000000000000000000003"
	Dave       = "0xDA7E000000000000000000000000000000000004"
	Nobody     = "0x000000000000000000000000000000000000dEaD"
	Pool       = "0xC6962004f452bE9203591991D15f6b388e09E8D0"
	Handler    = "0x29BbF7EbB9C5146c98851e76A5529985E4052116"
	HandlerTwo = "0xe11d346757d052214686bCbC860C94363AfB4a9A"
	NoHook     = "0x0000000000000000000000000000000000000000"
	DayHook    = "0x8c30c7F03421D2C9A0354e93c23014BF6C465a79"
	OwnDelgate = "0xDE1E6A7E00000000000000000000000000000005"
)

// HistoryBlocks are blocks of the demo's history a request may pin
// (`block`): its head, blocks of its last day and week and its first,
// and one before it (refused).
var HistoryBlocks = []string{"402123456", "402121092", "402032256", "401923456", "401605056", "180378373", "1000"}

// ranges are carol's ranges (tickLower, tickUpper, hook, handler), as
// her deposit positions list them.
var ranges = [][4]string{
	{"-196270", "-196260", NoHook, Handler}, {"-196180", "-196170", NoHook, Handler}, {"-196300", "-196290", NoHook, Handler},
	{"-196150", "-196140", NoHook, Handler}, {"-196350", "-196340", DayHook, Handler}, {"-196320", "-196310", NoHook, Handler},
	{"-197260", "-197250", NoHook, Handler}, {"-196300", "-196290", DayHook, Handler}, {"-196260", "-196250", NoHook, Handler},
	{"-195260", "-195250", NoHook, Handler}, {"-196240", "-196230", NoHook, HandlerTwo}, {"-196250", "-196240", NoHook, Handler},
}

// Dims are the sweep's dimensions.
func Dims() []Dim {
	users := [][]string{{Alice}, {Bob}, {Carol}, {Dave}, {Nobody}}
	optionIDs := [][]string{}
	for _, id := range append(append([]int{}, OptionIDs...), NeverMinted, 0) {
		optionIDs = append(optionIDs, []string{fmt.Sprint(id)})
	}
	blocks := [][]string{{""}}
	for _, b := range HistoryBlocks {
		blocks = append(blocks, []string{b})
	}
	return []Dim{
		{Names: []string{"chainId"}, Values: [][]string{{"42161"}}},
		{Names: []string{"optionMarket"}, Values: [][]string{{Market}}},
		{Names: []string{"user"}, Values: append(users, []string{NoHook}), Cross: true},
		{Names: []string{"first", "skip"}, Values: [][]string{{"100", "0"}, {"5", "0"}, {"5", "5"}, {"1", "2"}, {"1000", "0"}}, Cross: true},
		{Names: []string{"callsReach", "putsReach"}, Values: [][]string{{"10", "10"}, {"1", "1"}, {"100", "100"}, {"7", "3"}, {"1000", "1000"}}},
		{Names: []string{"optionId"}, Values: optionIDs, Cross: true},
		{Names: []string{"swapperId"}, Values: [][]string{{"uni-v3"}, {"1inch"}}, Cross: true},
		{Names: []string{"slippage"}, Values: [][]string{{"1"}, {"0.1"}, {"0.5"}, {"2.5"}, {"5"}}},
		{Names: []string{"block"}, Values: blocks},
		{Names: []string{"type", "strike", "amount"}, Values: purchases()},
		{Names: []string{"ttl"}, Values: [][]string{{"86400"}, {"3600"}, {"7200"}, {"604800"}}},
		{Names: []string{"ttls"}, Values: [][]string{{"3600,86400"}, {"3600"}, {"86400"}, {"604800"}, {"3600,7200"}}},
		{Names: []string{"handler", "pool", "hook", "tickLower", "tickUpper", "minStrike", "maxStrike", "amount"}, Values: deposits()},
		{Names: []string{"handler", "pool", "hook", "tickLower", "tickUpper", "shares"}, Values: withdrawals(), Cross: true},
		{Names: []string{"pool", "handler"}, Values: [][]string{{"", ""}, {Pool, Handler}, {Pool, HandlerTwo}, {Pool, ""}}},
		{Names: []string{"from", "to"}, Values: [][]string{{"1763553600", "1763704800"}, {"1763596800", "1763683200"}, {"1762732800", "1763726400"}, {"1763683200", "1763726400"}, {"1708290130", "1708376530"}}},
		{Names: []string{"delegate"}, Values: [][]string{{""}, {OwnDelgate}, {"0xb223eD797742E096632c39d1b2e0c313750B25FE"}}},
		{Names: []string{"enable"}, Values: [][]string{{"true"}, {"false"}}, Cross: true},
		{Names: []string{"within"}, Values: [][]string{{"21600"}, {"3600"}, {"86400"}, {"604800"}}},
		{Names: []string{"interval"}, Values: [][]string{{"4h"}, {"1m"}, {"5m"}, {"15m"}, {"1h"}, {"1d"}}, Cross: true},
		// The hosted API's paths: chains as stryke-fe sends them (with
		// chains the demo does not serve), tickers in the cases clients
		// send, and one no market has.
		{Names: []string{"chains"}, Values: [][]string{{"42161"}, {"421614,42161,146,8453,81457,5000"}}},
		{Names: []string{"filterDeprecated"}, Values: [][]string{{"true"}, {"false"}}},
		{Names: []string{"account"}, Values: [][]string{{Alice}, {Nobody}}},
		{Names: []string{"markPrice"}, Values: [][]string{{"3000.10429"}}},
		{Names: []string{"ticker"}, Values: [][]string{{"WETH/USDC"}, {"weth/usdc"}, {"WSYK/USDC"}}},
		// The hosted PnL shapes: the leaderboard's periods.
		{Names: []string{"period"}, Values: [][]string{{"1D"}, {"1W"}, {"1M"}, {"6M"}}, Cross: true},
	}
}

// purchases are the strikes the demo market sells, each with amounts in
// its collateral: a small one, the usual one and more than is free.
func purchases() [][]string {
	var out [][]string
	for _, s := range []string{"3004.9080590767317", "3019.9694684613037", "3035.1063696906144", "3320.920394846154"} {
		for _, a := range []string{"1000000000000000000", "100000000000000000", "100000000000000000000"} {
			out = append(out, []string{"call", s, a})
		}
	}
	for _, s := range []string{"2995.90729282992", "2986.9334870728926", "2710.8225726947694"} {
		for _, a := range []string{"5000000000", "1000000000", "100000000000"} {
			out = append(out, []string{"put", s, a})
		}
	}
	return out
}

// deposits are ranges on either side of the price, by ticks or strikes,
// with amounts in the token each holds.
func deposits() [][]string {
	return [][]string{
		{Handler, Pool, NoHook, "-196200", "-196180", "", "", "1000000000000000000"},
		{Handler, Pool, NoHook, "-196150", "-196140", "", "", "100000000000000000"},
		{Handler, Pool, DayHook, "-196200", "-196190", "", "", "1000000000000000000"},
		{Handler, Pool, NoHook, "-196300", "-196280", "", "", "5000000000"},
		{Handler, Pool, NoHook, "", "", "3004.9080590767317", "3035.1063696906144", "1000000000000000000"},
		{Handler, Pool, NoHook, "", "", "2986.9334870728926", "2995.90729282992", "1000000000"},
		{HandlerTwo, Pool, NoHook, "-196200", "-196190", "", "", "1000000000000000000"},
	}
}

// withdrawals are each of carol's ranges with every share that can go,
// one share and a tenth of a unit of liquidity's worth of shares.
func withdrawals() [][]string {
	var out [][]string
	for _, r := range ranges {
		for _, shares := range []string{"max", "1", "100000000000000000"} {
			out = append(out, []string{r[3], Pool, r[2], r[0], r[1], shares})
		}
	}
	return out
}

// Sweep lists the requests of the sweep over routes: for each route,
// every combination of its cross dimensions, then each value of each
// other dimension with the rest at their first. An optional parameter is
// left out at first. A required parameter no dimension gives is an error.
func Sweep(routes []Route) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, r := range routes {
		dims, err := routeDims(r)
		if err != nil {
			return nil, err
		}
		path := strings.ReplaceAll(r.Path, "{pool}", Pool) // stats/tvl/{pool}: the demo's pool
		for _, q := range routeQueries(dims) {
			p := path + "?" + q
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// routeDims are the dimensions whose parameters all belong to the route,
// each parameter taken from the first that gives it; an optional
// parameter's dimension starts with leaving it out.
func routeDims(r Route) ([]Dim, error) {
	given := map[string]bool{}
	var dims []Dim
	for _, d := range Dims() {
		if !all(d.Names, r.Params) || anyGiven(d.Names, given) {
			continue
		}
		for _, n := range d.Names {
			given[n] = true
		}
		if len(d.Names) == 1 && slices.Contains(r.Optional, d.Names[0]) && d.Values[0][0] != "" {
			d.Values = append([][]string{{""}}, d.Values...)
		}
		dims = append(dims, d)
	}
	for _, p := range r.Params {
		if !given[p] && !slices.Contains(r.Optional, p) {
			return nil, fmt.Errorf("demo sweep: %s takes %s, for which the sweep has no values (internal/demo/sweep.go)", r.Path, p)
		}
	}
	return dims, nil
}

func all(names, params []string) bool {
	for _, n := range names {
		if !slices.Contains(params, n) {
			return false
		}
	}
	return true
}

func anyGiven(names []string, given map[string]bool) bool {
	for _, n := range names {
		if given[n] {
			return true
		}
	}
	return false
}

// routeQueries combines the route's dimensions into query strings.
func routeQueries(dims []Dim) []string {
	base := make([]int, len(dims))
	var combos [][]int
	var cross func(i int, cur []int)
	cross = func(i int, cur []int) {
		if i == len(dims) {
			combos = append(combos, slices.Clone(cur))
			return
		}
		if !dims[i].Cross {
			cross(i+1, cur)
			return
		}
		for v := range dims[i].Values {
			cur[i] = v
			cross(i+1, cur)
		}
		cur[i] = 0
	}
	cross(0, slices.Clone(base))
	for i, d := range dims {
		for v := 1; v < len(d.Values) && !d.Cross; v++ {
			c := slices.Clone(base)
			c[i] = v
			combos = append(combos, c)
		}
	}
	out := make([]string, 0, len(combos))
	for _, c := range combos {
		out = append(out, query(dims, c))
	}
	return out
}

// query writes one combination, parameters in the dimensions' order.
func query(dims []Dim, combo []int) string {
	var b strings.Builder
	for i, d := range dims {
		for j, n := range d.Names {
			v := d.Values[combo[i]][j]
			if v == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(n + "=" + url.QueryEscape(v))
		}
	}
	return strings.ReplaceAll(b.String(), "%2C", ",")
}
