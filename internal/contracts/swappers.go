package contracts

// Swapper is what tells stryke's swapper contracts apart, as the
// subgraph's mappings probe a learned one (subgraph/src): a
// SwapRouterSwapper (and a SwapRouter02Swapper) answers sr(), the router
// it swaps through; a OneInchSwapper answers oneInchRouter().
var Swapper = mustABI(`[
 {"type":"function","name":"sr","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"oneInchRouter","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]}
]`)

// SwapRouter is the getter the start-up check asks the router a swapper
// names: Uniswap's SwapRouter and SwapRouter02 (and their forks) answer
// factory(); what matters is only that the router holds code (an account
// without code answers every call with nothing, and a router with code
// answers or reverts).
var SwapRouter = mustABI(`[
 {"type":"function","name":"factory","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]}
]`)
