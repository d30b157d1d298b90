package hostedtypes

// token is stryke-fe's token of OptionMarketsResponseDtoV2: decimals a
// number (the recorded answer's; the hosted OpenAPI's TokenDto said string).
var token = Object(map[string]Type{"address": String, "decimals": Number, "symbol": String})

// OptionMarketsV2 is /v1.1/clamm/option-markets as stryke-fe's
// OptionMarketsResponseDtoV2 (src/types/varrock.ts) and its OptionMarket
// (the top-level tickSpacing) declare it, with the JSON types of the
// ExpressEpoch recording: a bare array, every field non-null.
var OptionMarketsV2 = ArrayOf(Object(map[string]Type{
	"chainId": Number, "deprecated": Boolean, "pairName": String, "ticker": String,
	"address": String, "primePool": String, "feeStrategy": String, "tokenURIFetcher": String, "optionsPricing": String,
	"pools":     ArrayOf(Object(map[string]Type{"address": String, "fee": Number, "handler": String, "name": String, "tickSpacing": Number})),
	"callToken": token, "putToken": token,
	"totalLiquidity": Number, "availableLiquidity": Number, "openInterest": Number,
	"premiums24h": Number, "volume24h": Number, "protocolFees24h": Number,
	"isLimitOrdersEnabled": Boolean, "tickSpacing": Number,
}))

// PriceAndTick is /uniswap-prices/mark-price as stryke-fe's zod
// PriceAndTickSchema declares it; the gateway's asOf envelope is an
// extra field clients ignore.
var PriceAndTick = Object(map[string]Type{
	"markPrice": Number, "tick": Number, "markPriceUsd": Number, "quoteAssetPriceUsd": Number,
}).Allowing("asOf")

// Candles is /uniswap-prices/candles as stryke-fe's datafeed reads it: a
// bare array of numbers, time in seconds.
var Candles = ArrayOf(Object(map[string]Type{
	"open": Number, "high": Number, "low": Number, "close": Number, "time": Number,
}))

// LastPrice is /uniswap-prices/last-price as elvarg's getMarkPrice read
// it: each field passed through Number(...).
var LastPrice = Object(map[string]Type{"lastPrice": Numeric, "tick": Numeric}).Allowing("asOf")

// OptionsPools is the older /clamm/pools as elvarg's getOptionsPools
// read it: ttls and ivs decimal strings, decimals a number.
var OptionsPools = ArrayOf(Object(map[string]Type{
	"pairName": String, "pairTicker": String, "callToken": token, "putToken": token,
	"optionsPoolAddress": String, "tokenURIFetcher": String,
	"ttls": ArrayOf(String), "ivs": ArrayOf(String), "primePool": String,
}))

// hostedTx is elvarg's {txData, to}.
var hostedTx = Object(map[string]Type{"txData": String, "to": String})

// Delegators is the older /clamm/auto-exerciser/delegators as elvarg's
// getAutoExercisers read it.
var Delegators = ArrayOf(Object(map[string]Type{
	"name": String, "approved": Boolean, "approveTxData": hostedTx, "revokeApproveTxData": hostedTx,
}))
