// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {ClammMath} from "./ClammMath.sol";
import {IPool} from "./Interfaces.sol";
import {SingleTickHandler} from "./SingleTickHandler.sol";

/// @notice Test stand-in for UniswapV3SingleTickLiquidityHandlerV3
/// (stryke-xyz/clamm 80766cc), on the shared SingleTickHandler. What the
/// V3 changes, as the real one:
///   - mintPositionHandler refuses a pool the admin has not listed in
///     whitelistedPools (NotWhitelistedPool), after the app check;
///   - reserveLiquidity(context, data) and withdrawReserveLiquidity(context,
///     data) take the account as their first argument and only a whitelisted
///     app (the position manager V2, whose reserveLiquidity(handler, data)
///     passes its caller) may call them: a liquidity provider calling the
///     handler directly is refused (NotWhitelisted);
///   - a compounded fee is re-added by an internal addLiquidity, whose
///     caller, and so payer in the mint callback, is the position manager
///     of the mint (the real V3 pays the re-mint from the position manager's
///     balance and allowance, not from the fees the handler collected);
///   - getAmountsForLiquidity(pool, tickLower, tickUpper, liquidity) is public.
/// Events, getters and share accounting are the V2's.
contract TestSingleTickHandlerV3 is SingleTickHandler {
    error UniswapV3SingleTickLiquidityHandlerV3__NotWhitelisted();
    error UniswapV3SingleTickLiquidityHandlerV3__InRangeLP();
    error UniswapV3SingleTickLiquidityHandlerV3__InsufficientLiquidity();
    error UniswapV3SingleTickLiquidityHandlerV3__BeforeReserveCooldown();
    error UniswapV3SingleTickLiquidityHandlerV3__NotWhitelistedPool();

    event LogUpdateWhitelistedPools(address _pool, bool _status);

    mapping(address => bool) public whitelistedPools;

    constructor(address _factory, address _swapRouter) SingleTickHandler(_factory, _swapRouter) {}

    /// @notice Burns `context`'s shares into reserved liquidity (see
    /// _reserve); only a whitelisted app (the position manager V2) calls it.
    function reserveLiquidity(address context, bytes calldata _data) external whenNotPaused returns (uint256) {
        _onlyWhitelisted();
        return _reserve(context, _data);
    }

    /// @notice Withdraws `context`'s reserved liquidity to it (see
    /// _withdrawReserved); only a whitelisted app calls it.
    function withdrawReserveLiquidity(address context, bytes calldata _data) external whenNotPaused {
        _onlyWhitelisted();
        _withdrawReserved(context, _data);
    }

    /// @notice The token amounts `liquidity` is worth in the range at the pool's current price.
    function getAmountsForLiquidity(IPool pool, int24 tickLower, int24 tickUpper, uint128 liquidity)
        public
        view
        returns (uint256 amount0, uint256 amount1)
    {
        return ClammMath.amountsForLiquidity(
            _price(pool), ClammMath.sqrtRatioAtTick(tickLower), ClammMath.sqrtRatioAtTick(tickUpper), liquidity
        );
    }

    function updateWhitelistedPools(address _pool, bool _status) external onlyRole(DEFAULT_ADMIN_ROLE) {
        whitelistedPools[_pool] = _status;
        emit LogUpdateWhitelistedPools(_pool, _status);
    }

    function _fail(Fail f) internal pure override {
        if (f == Fail.NotWhitelisted) revert UniswapV3SingleTickLiquidityHandlerV3__NotWhitelisted();
        if (f == Fail.InRangeLP) revert UniswapV3SingleTickLiquidityHandlerV3__InRangeLP();
        if (f == Fail.InsufficientLiquidity) revert UniswapV3SingleTickLiquidityHandlerV3__InsufficientLiquidity();
        revert UniswapV3SingleTickLiquidityHandlerV3__BeforeReserveCooldown();
    }

    function _checkPool(IPool pool) internal view override {
        if (!whitelistedPools[address(pool)]) revert UniswapV3SingleTickLiquidityHandlerV3__NotWhitelistedPool();
    }

    function _addCompounded(AddLiquidityParams memory a) internal override returns (uint128 l) {
        (l,,,) = addLiquidity(a);
    }
}
