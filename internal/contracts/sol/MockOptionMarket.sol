// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice Test double of a Stryke option market's three immutable getters,
/// for reading a real Uniswap V3 pool through ChainedRead on the simulated
/// EVM (internal/evmtest).
contract MockOptionMarket {
    address public callAsset;
    address public putAsset;
    address public primePool;

    constructor(address callAsset_, address putAsset_, address primePool_) {
        callAsset = callAsset_;
        putAsset = putAsset_;
        primePool = primePool_;
    }
}
