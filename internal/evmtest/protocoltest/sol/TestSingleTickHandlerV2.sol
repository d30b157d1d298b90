// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IPool} from "./Interfaces.sol";
import {SingleTickHandler} from "./SingleTickHandler.sol";

/// @notice Test stand-in for UniswapV3SingleTickLiquidityHandlerV2
/// (stryke-xyz/clamm), on the shared SingleTickHandler. What is the V2's
/// own: a liquidity provider reserves and withdraws reserved liquidity by
/// calling the handler directly (the account is msg.sender, no app
/// whitelist); a mint takes any pool; a compounded fee is re-added through
/// an external call to the handler itself, so the handler pays from the
/// fees it collected.
contract TestSingleTickHandlerV2 is SingleTickHandler {
    error UniswapV3SingleTickLiquidityHandlerV2__NotWhitelisted();
    error UniswapV3SingleTickLiquidityHandlerV2__InRangeLP();
    error UniswapV3SingleTickLiquidityHandlerV2__InsufficientLiquidity();
    error UniswapV3SingleTickLiquidityHandlerV2__BeforeReserveCooldown();

    constructor(address _factory, address _swapRouter) SingleTickHandler(_factory, _swapRouter) {}

    /// @notice Burns the caller's shares into reserved liquidity (see _reserve).
    function reserveLiquidity(bytes calldata _data) external whenNotPaused returns (uint256) {
        return _reserve(msg.sender, _data);
    }

    /// @notice Withdraws the caller's reserved liquidity (see _withdrawReserved).
    function withdrawReserveLiquidity(bytes calldata _data) external whenNotPaused {
        _withdrawReserved(msg.sender, _data);
    }

    function _fail(Fail f) internal pure override {
        if (f == Fail.NotWhitelisted) revert UniswapV3SingleTickLiquidityHandlerV2__NotWhitelisted();
        if (f == Fail.InRangeLP) revert UniswapV3SingleTickLiquidityHandlerV2__InRangeLP();
        if (f == Fail.InsufficientLiquidity) revert UniswapV3SingleTickLiquidityHandlerV2__InsufficientLiquidity();
        revert UniswapV3SingleTickLiquidityHandlerV2__BeforeReserveCooldown();
    }

    function _checkPool(IPool) internal view override {}

    function _addCompounded(AddLiquidityParams memory a) internal override returns (uint128 l) {
        (l,,,) = TestSingleTickHandlerV2(address(this)).addLiquidity(a);
    }
}
