package hostedtypes

// The statistics and PnL paths' types (spec hosted-api-clients.md §2):
// bare numbers, FeesResponseDto, PnlDeltaResponseDto and the frontend's
// UserPnlResponseDto (app/leaderboard/types.ts), every figure a JSON
// number but the user's address.

// userPnl is UserPnlResponseDto.
var userPnl = Object(map[string]Type{
	"user": String, "firstTradeTimestamp": Number, "lastTradeTimestamp": Number,
	"pnl": Number, "premiumPaid": Number, "volume": Number, "roi": Number, "totalOptionsBought": Number,
})

// StatsPaths are the client types of the hosted statistics paths'
// answers, by route template. An object answer may carry the gateway's
// asOf envelope, which its client ignores; an array's items may not.
var StatsPaths = map[string]Type{
	"/clamm/stats/tvl":                Number,
	"/clamm/stats/tvl/{pool}":         Number,
	"/clamm/stats/open-interest":      Number,
	"/clamm/stats/volume":             Number,
	"/clamm/stats/dau":                Number,
	"/clamm/stats/fees":               Object(map[string]Type{"premiums": Number, "protocolFees": Number}).Allowing("asOf"),
	"/clamm/stats/total-volume":       Number,
	"/clamm/stats/delta":              ArrayOf(Object(map[string]Type{"delta": Number, "timestamp": Number})),
	"/clamm/stats/delta-bounded-all":  ArrayOf(userPnl),
	"/clamm/stats/delta-bounded-user": userPnl.Allowing("asOf"),
}
