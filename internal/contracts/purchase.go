package contracts

// MintOption is DopexV2OptionMarketV2.mintOption(OptionParams): the legs
// (OptionTicks with hook), the option's ticks, ttl, side and the most the
// buyer lets the market take (premium plus protocol fee).
var MintOption = mustABI(`[
 {"type":"function","name":"mintOption","stateMutability":"nonpayable","inputs":[{"name":"_params","type":"tuple","components":[
   {"name":"optionTicks","type":"tuple[]","components":[
     {"name":"_handler","type":"address"},{"name":"pool","type":"address"},{"name":"hook","type":"address"},
     {"name":"tickLower","type":"int24"},{"name":"tickUpper","type":"int24"},{"name":"liquidityToUse","type":"uint256"}]},
   {"name":"tickLower","type":"int24"},{"name":"tickUpper","type":"int24"},{"name":"ttl","type":"uint256"},
   {"name":"isCall","type":"bool"},{"name":"maxCostAllowance","type":"uint256"}]}],"outputs":[]}
]`)

// ERC20Approve is ERC20's approve(spender, amount).
var ERC20Approve = mustABI(`[
 {"type":"function","name":"approve","stateMutability":"nonpayable","inputs":[{"name":"spender","type":"address"},{"name":"amount","type":"uint256"}],"outputs":[{"name":"","type":"bool"}]}
]`)
