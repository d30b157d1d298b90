// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice Test doubles of what the strikes chain reads beyond the pool, for
/// running the gateway's reads on the simulated EVM (internal/evmtest): the
/// position manager's handler+app whitelist (same key as
/// DopexV2PositionManager: keccak256(abi.encode(handler, app))), handlers'
/// pause flag and tokenIds getter with the V1 and V2 TokenIdInfo layouts,
/// and a market with positionManager() and name().
contract MockPositionManager {
    mapping(bytes32 => bool) public whitelistedHandlersWithApp;

    function updateWhitelistHandlerWithApp(address handler, address app, bool status) external {
        whitelistedHandlersWithApp[keccak256(abi.encode(handler, app))] = status;
    }
}

/// @notice A V1 handler's public state: TokenIdInfo without reservedLiquidity.
contract MockHandlerV1 {
    struct TokenIdInfo {
        uint128 totalLiquidity;
        uint128 totalSupply;
        uint128 liquidityUsed;
        uint256 feeGrowthInside0LastX128;
        uint256 feeGrowthInside1LastX128;
        uint128 tokensOwed0;
        uint128 tokensOwed1;
        uint64 lastDonation;
        uint128 donatedLiquidity;
        address token0;
        address token1;
        uint24 fee;
    }

    mapping(uint256 => TokenIdInfo) public tokenIds;
    bool public paused;

    function setPaused(bool paused_) external {
        paused = paused_;
    }
}

/// @notice A V2 handler's public state: TokenIdInfo with reservedLiquidity.
contract MockHandlerV2 {
    struct TokenIdInfo {
        uint128 totalLiquidity;
        uint128 totalSupply;
        uint128 liquidityUsed;
        uint256 feeGrowthInside0LastX128;
        uint256 feeGrowthInside1LastX128;
        uint128 tokensOwed0;
        uint128 tokensOwed1;
        uint64 lastDonation;
        uint128 donatedLiquidity;
        address token0;
        address token1;
        uint24 fee;
        uint128 reservedLiquidity;
    }

    mapping(uint256 => TokenIdInfo) public tokenIds;
    bool public paused;

    function setPaused(bool paused_) external {
        paused = paused_;
    }
}

/// @notice A market's immutable getters including its position manager.
contract MockStrikesMarket {
    address public callAsset;
    address public putAsset;
    address public primePool;
    address public positionManager;
    string public name;

    constructor(address callAsset_, address putAsset_, address primePool_, address positionManager_, string memory name_) {
        callAsset = callAsset_;
        putAsset = putAsset_;
        primePool = primePool_;
        positionManager = positionManager_;
        name = name_;
    }
}
