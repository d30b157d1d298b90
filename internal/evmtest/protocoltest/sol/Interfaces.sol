// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice The interfaces between the test protocol's contracts, with the
/// function signatures of stryke-xyz/clamm's IHandler, IHook, ISwapper and
/// IDopexV2PositionManager (the subset the market and handler use).

interface IHandler {
    function getHandlerIdentifier(bytes calldata data) external view returns (uint256);
    function tokensToPullForMint(bytes calldata data) external view returns (address[] memory, uint256[] memory);
    function mintPositionHandler(address context, bytes calldata data) external returns (uint256);
    function burnPositionHandler(address context, bytes calldata data) external returns (uint256);
    function usePositionHandler(bytes calldata data) external returns (address[] memory, uint256[] memory, uint256);
    function tokensToPullForUnUse(bytes calldata data) external view returns (address[] memory, uint256[] memory);
    function unusePositionHandler(bytes calldata data) external returns (uint256[] memory, uint256);
    function tokensToPullForDonate(bytes calldata data) external view returns (address[] memory, uint256[] memory);
    function donateToPosition(bytes calldata data) external returns (uint256[] memory, uint256);
}

/// @notice The reservation functions a V3 handler adds to IHandler
/// (stryke-xyz/clamm IHandlerV3): the account is passed by the position
/// manager V2, the only caller the handler accepts.
interface IHandlerV3 is IHandler {
    function reserveLiquidity(address context, bytes calldata data) external returns (uint256);
    function withdrawReserveLiquidity(address context, bytes calldata data) external;
}

interface IHook {
    function onPositionUse(bytes calldata data) external;
    function onPositionUnUse(bytes calldata data) external;
}

interface ISwapper {
    function onSwapReceived(address tokenIn, address tokenOut, uint256 amountIn, bytes calldata swapData)
        external
        returns (uint256 amountOut);
}

interface IPositionManager {
    function usePosition(IHandler handler, bytes calldata data)
        external
        returns (address[] memory tokens, uint256[] memory amounts, uint256 liquidityUsed);
    function unusePosition(IHandler handler, bytes calldata data)
        external
        returns (uint256[] memory amounts, uint256 liquidity);
    function donateToPosition(IHandler handler, bytes calldata data)
        external
        returns (uint256[] memory amounts, uint256 liquidity);
}

/// @notice The pool functions the protocol calls (Uniswap V3's IUniswapV3Pool subset).
interface IPool {
    function token0() external view returns (address);
    function token1() external view returns (address);
    function fee() external view returns (uint24);
    function slot0()
        external
        view
        returns (uint160 sqrtPriceX96, int24 tick, uint16, uint16, uint16, uint8, bool);
    function positions(bytes32 key)
        external
        view
        returns (uint128 liquidity, uint256 feeGrowthInside0LastX128, uint256 feeGrowthInside1LastX128, uint128 tokensOwed0, uint128 tokensOwed1);
    function mint(address recipient, int24 tickLower, int24 tickUpper, uint128 amount, bytes calldata data)
        external
        returns (uint256 amount0, uint256 amount1);
    function burn(int24 tickLower, int24 tickUpper, uint128 amount) external returns (uint256 amount0, uint256 amount1);
    function collect(address recipient, int24 tickLower, int24 tickUpper, uint128 amount0Requested, uint128 amount1Requested)
        external
        returns (uint128 amount0, uint128 amount1);
    function swap(address recipient, bool zeroForOne, int256 amountSpecified, uint160 sqrtPriceLimitX96, bytes calldata data)
        external
        returns (int256 amount0, int256 amount1);
}

interface IFactory {
    function getPool(address tokenA, address tokenB, uint24 fee) external view returns (address);
}

/// @notice Uniswap V3 SwapRouter's exactInputSingle (v3-periphery ISwapRouter).
interface ISwapRouter {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 deadline;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }

    function exactInputSingle(ExactInputSingleParams calldata params) external payable returns (uint256 amountOut);
}
