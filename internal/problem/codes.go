package problem

// This file is the catalogue: every error code a client can see is declared
// here, once, with its kind (the HTTP status follows from the kind, in the
// gateway's one switch) and its documented meaning. Nothing else in the
// module spells a code; gateway/catalogue_test.go holds this list equal to
// the OpenAPI document's enum and to the error table of docs/api.md.

// Code is one client-visible error code. Only this package can declare one,
// so a typo is a compile error, not a new public code.
type Code struct {
	name    string
	kind    Kind
	meaning string
}

// Name is the code as clients see it (INVALID_PARAMETER, RPC_ERROR, ...).
func (c *Code) Name() string { return c.name }

// Kind is the class of failure; the gateway maps it to the HTTP status.
func (c *Code) Kind() Kind { return c.kind }

// Meaning is the code's documented meaning, as docs/api.md states it.
func (c *Code) Meaning() string { return c.meaning }

func (c *Code) String() string { return c.name }

var catalogue []*Code

func declare(name string, kind Kind, meaning string) *Code {
	c := &Code{name: name, kind: kind, meaning: meaning}
	catalogue = append(catalogue, c)
	return c
}

// Catalogue returns every declared code, in declaration order.
func Catalogue() []*Code { return append([]*Code(nil), catalogue...) }

// The client's mistakes.
var (
	InvalidParameter = declare("INVALID_PARAMETER", KindInvalidArgument, "a parameter is missing, given twice, malformed or out of range; an unconfigured chainId")
	RouteNotFound    = declare("NOT_FOUND", KindNotFound, "no such route")
	MethodNotAllowed = declare("METHOD_NOT_ALLOWED", KindMethodNotAllowed, "a method the route does not take (the API: GET and HEAD; the query API: GET and POST); Allow names the ones it takes")
	RateLimited      = declare("RATE_LIMITED", KindRateLimited, "the client is over its rate limit")
	HeadersTooLarge  = declare("HEADERS_TOO_LARGE", KindHeaderTooLarge, "the request's header fields are over 16 KiB")
	// MalformedRequest is mostly written by the listener, not a handler
	// (the query API's handler writes it for a body cut short): net/http
	// refuses such a request before routing, with its own status (400, or
	// 505 for an HTTP version other than 1.x, 501 for a Transfer-Encoding
	// it does not support, 417 for an Expect other than 100-continue),
	// which the answer keeps.
	MalformedRequest = declare("MALFORMED_REQUEST", KindInvalidArgument, "the request is not HTTP/1.x the server can parse: request line, Host or header syntax (400); HTTP version (505); Transfer-Encoding (501); an Expect other than 100-continue (417); a body that ends before its length (400, the query API)")
	// ClientClosed is never sent: it names, in the access log and metrics,
	// a request whose client hung up before its answer was ready.
	ClientClosed = declare("CLIENT_CLOSED", KindClientClosed, "the client hung up before its answer was ready; logged and counted as 499, never sent")
	// RouteGone answers an older path of the hosted API whose successor
	// takes other parameters or answers another shape (gateway/hosted_older.go).
	RouteGone = declare("ROUTE_GONE", KindGone, "an older route of the hosted API that was superseded by one that takes other parameters or answers another shape; the message names the successor")
)

// The hosted API's bare USD figures (/clamm/stats/tvl/{pool} and its kin):
// a figure no dollar price is known for is refused, never answered as 0,
// which a client dividing by it would take for an empty pool.
var (
	NoUSDPrice   = declare("NO_USD_PRICE", KindUnprocessable, "the figure asked is in USD, and no configured USD stablecoin prices it (the market's put asset, or the pool's tokens, are none of CLAMM_USD_STABLECOINS): /clamm/stats gives it by token")
	PoolNotFound = declare("POOL_NOT_FOUND", KindNotFound, "no option market of the chain holds a range in that pool at the answer's block")
)

// What the protocol says about the market and the option.
var (
	MarketNotFound       = declare("MARKET_NOT_FOUND", KindNotFound, "the address is not an option market on that chain")
	OptionNotFound       = declare("OPTION_NOT_FOUND", KindNotFound, "the option was never minted or was burnt")
	MarketUnsupported    = declare("MARKET_UNSUPPORTED", KindUnprocessable, "the market's pool or tokens do not answer the standard calls")
	MarketV1Unsupported  = declare("MARKET_V1_UNSUPPORTED", KindUnprocessable, "a V1 market cannot be prepared for exercise, quoted or priced")
	OptionExpired        = declare("OPTION_EXPIRED", KindUnprocessable, "the option has expired")
	OptionFullyExercised = declare("OPTION_FULLY_EXERCISED", KindUnprocessable, "every leg of the option has been exercised")
	OptionNotInTheMoney  = declare("OPTION_NOT_IN_THE_MONEY", KindUnprocessable, "exercising the option now would not pay")
	OptionTooManyLegs    = declare("OPTION_TOO_MANY_LEGS", KindUnprocessable, "the option has more legs than the gateway prepares")
	ExerciseWouldRevert  = declare("EXERCISE_WOULD_REVERT", KindUnprocessable, "the built transaction reverts when simulated from the owner")
	DelegateWouldRevert  = declare("DELEGATE_WOULD_REVERT", KindUnprocessable, "the built updateExerciseDelegate reverts when simulated from the user; the message names the contract's error")
)

// Why an option cannot be bought as asked.
var (
	PurchaseInsufficientLiquidity = declare("PURCHASE_INSUFFICIENT_LIQUIDITY", KindUnprocessable, "the strike's buyable ranges hold less free liquidity than the amount asked (the message says how much there is)")
	PurchaseIVNotSet              = declare("PURCHASE_IV_NOT_SET", KindUnprocessable, "the market's pricing has no implied volatility for that ttl: mintOption would revert")
	PurchaseHookRefused           = declare("PURCHASE_HOOK_REFUSED", KindUnprocessable, "the hooks of the ranges that hold the liquidity refuse this ttl or today (ttl bound, weekend)")
	PurchaseWouldRevert           = declare("PURCHASE_WOULD_REVERT", KindUnprocessable, "the market's pricing or the built mintOption reverts; the message names the contract's error")
)

// Why a liquidity provider's deposit or withdrawal cannot be prepared.
var (
	PositionNotFound       = declare("POSITION_NOT_FOUND", KindNotFound, "the user holds no shares and no reserved liquidity in that range of that handler")
	HandlerPaused          = declare("HANDLER_PAUSED", KindUnprocessable, "the handler is paused: it refuses deposits, withdrawals and reservations until unpaused")
	HandlerNotWhitelisted  = declare("HANDLER_NOT_WHITELISTED", KindUnprocessable, "no position manager of the chain's markets accepts the handler, or (deposits) no market can buy from it on that pool")
	PoolNotWhitelisted     = declare("POOL_NOT_WHITELISTED", KindUnprocessable, "(deposits) the V3 handler does not take deposits into that pool (its whitelistedPools)")
	DepositWrongSide       = declare("DEPOSIT_WRONG_SIDE", KindUnprocessable, "a range of the deposit holds the pool's current price, or the ranges lie on both sides of it (a deposit holds one token)")
	DepositTooSmall        = declare("DEPOSIT_TOO_SMALL", KindUnprocessable, "the amount, split across the ranges, gives a range no liquidity")
	DepositWouldRevert     = declare("DEPOSIT_WOULD_REVERT", KindUnprocessable, "the built multicall of mintPosition reverts when simulated from the user; the message names the contract's error")
	WithdrawExceedsAllowed = declare("WITHDRAW_EXCEEDS_WITHDRAWABLE", KindUnprocessable, "more shares asked than can be burnt now (options hold the rest, or the user holds fewer); the message says how many can")
	WithdrawWouldRevert    = declare("WITHDRAW_WOULD_REVERT", KindUnprocessable, "a built withdrawal transaction reverts when simulated from the user; the message names the contract's error")
)

// The quote source (QuoterV2 over RPC, or the 1inch API).
var (
	QuoteFailed                = declare("QUOTE_FAILED", KindUnprocessable, "the swapper cannot route the swap")
	QuoteInsufficientLiquidity = declare("QUOTE_INSUFFICIENT_LIQUIDITY", KindUnprocessable, "the swapper finds no route with enough liquidity")
	QuoteError                 = declare("QUOTE_ERROR", KindUpstreamError, "the quote source answered with an error or with data that does not decode")
	QuoteUnavailable           = declare("QUOTE_UNAVAILABLE", KindUpstreamUnavailable, "the quote source is unreachable or refuses (429/503)")
	QuoteRateLimited           = declare("QUOTE_RATE_LIMITED", KindUpstreamUnavailable, "the quote source's rate limit was reached")
	QuoteUnauthorized          = declare("QUOTE_UNAUTHORIZED", KindUpstreamUnavailable, "the quote source refused the configured key")
	QuoteNotConfigured         = declare("QUOTE_NOT_CONFIGURED", KindUpstreamUnavailable, "the swapper has no quote source configured on this chain")
	QuoteTimeout               = declare("QUOTE_TIMEOUT", KindUpstreamTimeout, "the quote source did not answer in time")
)

// Why a signed limit order is not accepted, listed or cancelled.
var (
	OrderNotFillable  = declare("ORDER_NOT_FILLABLE", KindUnprocessable, "the chain says the signed order could not be filled: the maker does not own the option or lacks the allowance, the limit-orders contract is not its exercise delegate, or the order was filled or cancelled on chain")
	OrderBookFull     = declare("ORDER_BOOK_FULL", KindRateLimited, "the maker already keeps as many open orders on the chain as the book allows per maker")
	OrderNotFound     = declare("ORDER_NOT_FOUND", KindNotFound, "the book holds no such order")
	OrderNotCancelled = declare("ORDER_NOT_CANCELLED", KindUnprocessable, "(hosted delete) the order is not cancelled on chain yet: send the cancel first")
	// OrderBookUnavailable is the book's own store (SQLite file or
	// PostgreSQL database) failing to open or answer: an outage of a
	// dependency, so 503, never a 500.
	OrderBookUnavailable = declare("ORDER_BOOK_UNAVAILABLE", KindUpstreamUnavailable, "the order book's store (CLAMM_ORDERS_PATH or CLAMM_ORDERS_DATABASE_URL) did not open or failed; nothing was stored")
	// DemoStoresNothing answers a write to the demo's book, which checks
	// an order by itself and stores nothing (a recording cannot check it
	// against the chain's head).
	DemoStoresNothing = declare("DEMO_STORES_NOTHING", KindUnprocessable, "(limit orders, the demo) the chain is served from recordings, which cannot check an order against the chain's head: the order was checked by itself (fields, data, signature) and nothing was stored")
	BodyTooLarge      = declare("BODY_TOO_LARGE", KindBodyTooLarge, "the request body is over the route's bound (16 KiB for an order, 1 MiB for a query to an index's query API)")
)

// The subgraph and the RPC node.
var (
	SubgraphError         = declare("SUBGRAPH_ERROR", KindUpstreamError, "the subgraph answered with an error or with data that does not decode (GraphQL errors in an HTTP 200 included)")
	SubgraphIndexingError = declare("SUBGRAPH_INDEXING_ERROR", KindUpstreamError, "the subgraph reports an indexing error; its data cannot be trusted")
	SubgraphUnavailable   = declare("SUBGRAPH_UNAVAILABLE", KindUpstreamUnavailable, "the subgraph is unreachable or refuses (429/503), or has indexed no block yet (its `_meta` names none: an embedded index before its first commit)")
	SubgraphTimeout       = declare("SUBGRAPH_TIMEOUT", KindUpstreamTimeout, "the subgraph did not answer in time")
	RPCError              = declare("RPC_ERROR", KindUpstreamError, "the RPC node answered with an error or with data that does not decode")
	RPCUnavailable        = declare("RPC_UNAVAILABLE", KindUpstreamUnavailable, "the RPC node is unreachable or refuses (429/503)")
	RPCTimeout            = declare("RPC_TIMEOUT", KindUpstreamTimeout, "the RPC node did not answer in time")
	RPCWrongChain         = declare("RPC_WRONG_CHAIN", KindUpstreamUnavailable, "the RPC node serves another chain than the one it is configured for (readiness; at start the gateway refuses to run)")
	HeadFeedStalled       = declare("HEAD_FEED_STALLED", KindUpstreamUnavailable, "the chain's head feed has not confirmed a head for longer than its stall bound (readiness only: ten feed periods, at least 30 s; its upstream is down or stuck)")
	SubgraphLagging       = declare("SUBGRAPH_LAGGING", KindUpstreamUnavailable, "the subgraph's block trails the chain head by more than CLAMM_MAX_LAG_BLOCKS (readiness only: answers are still served, with X-Subgraph-Block)")
)

// The block an answer is pinned to (the subgraph's indexed block, or the
// one the client asked for with `block`).
var (
	BlockNotIndexed = declare("BLOCK_NOT_INDEXED", KindUnprocessable, "the subgraph has not indexed the block asked for yet (the message says how far it has); ask again later or ask an earlier block")
	BlockPruned     = declare("BLOCK_PRUNED", KindUnprocessable, "the subgraph or the RPC node no longer holds the state of the block asked for (pruned history); ask a more recent block")
	BlockNotFound   = declare("BLOCK_NOT_FOUND", KindUnprocessable, "the RPC node has no block with that number: a block past its head, or one it has not seen yet")
)

// The gateway's own limits and configuration.
var (
	UpstreamNotConfigured = declare("UPSTREAM_NOT_CONFIGURED", KindUpstreamUnavailable, "the chain has no live upstreams configured")
	NotRecorded           = declare("NOT_RECORDED", KindNotFound, "the embedded demo holds no record for this request (another market, user or option than the demo's): not an outage, so a 404")
	Overloaded            = declare("OVERLOADED", KindUpstreamUnavailable, "the gateway's bound on concurrent upstream reads is reached")
	Timeout               = declare("TIMEOUT", KindUpstreamTimeout, "the whole request ran past the gateway's deadline")
	InternalError         = declare("INTERNAL", KindInternal, "a bug; details go to the log only")
)

// Source names one upstream and its three transport-failure codes, so that
// Upstream can classify a failure without building a code from strings.
type Source struct {
	Name                        string // as written in messages: "subgraph", "rpc", "quote"
	Error, Unavailable, Timeout *Code
}

// The upstreams.
var (
	Subgraph = Source{Name: "subgraph", Error: SubgraphError, Unavailable: SubgraphUnavailable, Timeout: SubgraphTimeout}
	RPC      = Source{Name: "rpc", Error: RPCError, Unavailable: RPCUnavailable, Timeout: RPCTimeout}
	Quote    = Source{Name: "quote", Error: QuoteError, Unavailable: QuoteUnavailable, Timeout: QuoteTimeout}
)
