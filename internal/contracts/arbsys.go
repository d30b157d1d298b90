package contracts

import "github.com/ethereum/go-ethereum/common"

// ArbSys is Arbitrum's system precompile, at ArbSysAddress on every
// Arbitrum chain. Its arbBlockNumber is the chain's own block number, the
// one eth_getBlockByNumber names; block.number (and so Multicall3's
// getBlockNumber) is there an estimate of Ethereum's. On other chains the
// address holds no code: a call to it returns no data.
var ArbSys = mustABI(`[
 {"type":"function","name":"arbBlockNumber","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]}
]`)

// ArbSysAddress is where ArbSys lives.
var ArbSysAddress = common.HexToAddress("0x0000000000000000000000000000000000000064")
