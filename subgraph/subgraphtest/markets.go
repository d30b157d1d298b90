package subgraphtest

import "sort"

// Market is a Market entity with its sums, as OptionMarkets selects it.
// Addresses are lowercase hex; amounts decimal strings.
type Market struct {
	ID        string      `json:"id"`
	Version   int         `json:"version"`
	CallAsset string      `json:"callAsset"`
	PutAsset  string      `json:"putAsset"`
	PrimePool EntityRef   `json:"primePool"`
	DayData   []MarketDay `json:"dayData"`
	MarketSums
}

// EntityRef is a nested entity selected by id only.
type EntityRef struct {
	ID string `json:"id"`
}

// MarketSums are the figures Market and MarketDayData share.
type MarketSums struct {
	Purchases        int    `json:"purchases"`
	Exercises        int    `json:"exercises"`
	CallVolume       string `json:"callVolume"`
	PutVolume        string `json:"putVolume"`
	CallPremium      string `json:"callPremium"`
	PutPremium       string `json:"putPremium"`
	CallProtocolFees string `json:"callProtocolFees"`
	PutProtocolFees  string `json:"putProtocolFees"`
}

// MarketDay is a MarketDayData entity (without its market link).
type MarketDay struct {
	Start int64 `json:"start"`
	MarketSums
}

// markets answers OptionMarkets: markets by id after the cursor, first of
// them, each with its two latest days (dayData(first: 2, orderBy: start,
// orderDirection: desc)).
func (s *Server) markets(v map[string]any) (map[string]any, error) {
	first, err := firstVar(v)
	if err != nil {
		return nil, err
	}
	after, _ := v["after"].(string)
	out := []Market{}
	for _, m := range s.Markets {
		if m.ID <= after {
			continue
		}
		days := append([]MarketDay{}, m.DayData...)
		sort.Slice(days, func(i, j int) bool { return days[i].Start > days[j].Start })
		if len(days) > 2 {
			days = days[:2]
		}
		m.DayData = days
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > first {
		out = out[:first]
	}
	return map[string]any{"markets": out}, nil
}
