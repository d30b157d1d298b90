// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";

/// @notice Uniswap V3 tick and liquidity arithmetic for the test protocol,
/// written for Solidity 0.8 (the npm v3-core/v3-periphery libraries pin
/// <0.8.0). Each function rounds exactly as Uniswap's TickMath and
/// LiquidityAmounts do: the market's amountToSwap and amountReq, and the
/// handler's re-mint, depend on that rounding to the unit. Full-precision
/// a*b/c is OpenZeppelin's Math.mulDiv (floor), equal to FullMath.mulDiv.
library ClammMath {
    uint256 internal constant Q96 = 1 << 96;
    uint256 internal constant Q128 = 1 << 128;
    int24 internal constant MAX_TICK = 887272;

    /// @notice sqrt(1.0001^tick) * 2^96, rounded up from Q128.128 as TickMath does.
    function sqrtRatioAtTick(int24 tick) internal pure returns (uint160) {
        uint256 a = tick < 0 ? uint256(-int256(tick)) : uint256(int256(tick));
        require(a <= uint256(int256(MAX_TICK)), "T");
        unchecked {
            // 1/sqrt(1.0001)^(2^i) in Q128.128 for each bit i of |tick|.
            uint256 r = a & 0x1 != 0 ? 0xfffcb933bd6fad37aa2d162d1a594001 : 0x100000000000000000000000000000000;
            if (a & 0x2 != 0) r = (r * 0xfff97272373d413259a46990580e213a) >> 128;
            if (a & 0x4 != 0) r = (r * 0xfff2e50f5f656932ef12357cf3c7fdcc) >> 128;
            if (a & 0x8 != 0) r = (r * 0xffe5caca7e10e4e61c3624eaa0941cd0) >> 128;
            if (a & 0x10 != 0) r = (r * 0xffcb9843d60f6159c9db58835c926644) >> 128;
            if (a & 0x20 != 0) r = (r * 0xff973b41fa98c081472e6896dfb254c0) >> 128;
            if (a & 0x40 != 0) r = (r * 0xff2ea16466c96a3843ec78b326b52861) >> 128;
            if (a & 0x80 != 0) r = (r * 0xfe5dee046a99a2a811c461f1969c3053) >> 128;
            if (a & 0x100 != 0) r = (r * 0xfcbe86c7900a88aedcffc83b479aa3a4) >> 128;
            if (a & 0x200 != 0) r = (r * 0xf987a7253ac413176f2b074cf7815e54) >> 128;
            if (a & 0x400 != 0) r = (r * 0xf3392b0822b70005940c7a398e4b70f3) >> 128;
            if (a & 0x800 != 0) r = (r * 0xe7159475a2c29b7443b29c7fa6e889d9) >> 128;
            if (a & 0x1000 != 0) r = (r * 0xd097f3bdfd2022b8845ad8f792aa5825) >> 128;
            if (a & 0x2000 != 0) r = (r * 0xa9f746462d870fdf8a65dc1f90e061e5) >> 128;
            if (a & 0x4000 != 0) r = (r * 0x70d869a156d2a1b890bb3df62baf32f7) >> 128;
            if (a & 0x8000 != 0) r = (r * 0x31be135f97d08fd981231505542fcfa6) >> 128;
            if (a & 0x10000 != 0) r = (r * 0x9aa508b5b7a84e1c677de54f3e99bc9) >> 128;
            if (a & 0x20000 != 0) r = (r * 0x5d6af8dedb81196699c329225ee604) >> 128;
            if (a & 0x40000 != 0) r = (r * 0x2216e584f5fa1ea926041bedfe98) >> 128;
            if (a & 0x80000 != 0) r = (r * 0x48a170391f7dc42444e8fa2) >> 128;
            if (tick > 0) r = type(uint256).max / r;
            return uint160((r >> 32) + (r % (1 << 32) == 0 ? 0 : 1));
        }
    }

    function _sorted(uint160 a, uint160 b) private pure returns (uint160, uint160) {
        return a > b ? (b, a) : (a, b);
    }

    function amount0ForLiquidity(uint160 sa, uint160 sb, uint128 liquidity) internal pure returns (uint256) {
        (sa, sb) = _sorted(sa, sb);
        return Math.mulDiv(uint256(liquidity) << 96, sb - sa, sb) / sa;
    }

    function amount1ForLiquidity(uint160 sa, uint160 sb, uint128 liquidity) internal pure returns (uint256) {
        (sa, sb) = _sorted(sa, sb);
        return Math.mulDiv(liquidity, sb - sa, Q96);
    }

    function amountsForLiquidity(uint160 sp, uint160 sa, uint160 sb, uint128 liquidity)
        internal
        pure
        returns (uint256 amount0, uint256 amount1)
    {
        (sa, sb) = _sorted(sa, sb);
        if (sp <= sa) {
            amount0 = amount0ForLiquidity(sa, sb, liquidity);
        } else if (sp < sb) {
            amount0 = amount0ForLiquidity(sp, sb, liquidity);
            amount1 = amount1ForLiquidity(sa, sp, liquidity);
        } else {
            amount1 = amount1ForLiquidity(sa, sb, liquidity);
        }
    }

    function _u128(uint256 x) private pure returns (uint128 y) {
        y = uint128(x);
        require(y == x);
    }

    function liquidityForAmount0(uint160 sa, uint160 sb, uint256 amount0) internal pure returns (uint128) {
        (sa, sb) = _sorted(sa, sb);
        return _u128(Math.mulDiv(amount0, Math.mulDiv(sa, sb, Q96), sb - sa));
    }

    function liquidityForAmount1(uint160 sa, uint160 sb, uint256 amount1) internal pure returns (uint128) {
        (sa, sb) = _sorted(sa, sb);
        return _u128(Math.mulDiv(amount1, Q96, sb - sa));
    }

    function liquidityForAmounts(uint160 sp, uint160 sa, uint160 sb, uint256 amount0, uint256 amount1)
        internal
        pure
        returns (uint128)
    {
        (sa, sb) = _sorted(sa, sb);
        if (sp <= sa) return liquidityForAmount0(sa, sb, amount0);
        if (sp < sb) {
            uint128 l0 = liquidityForAmount0(sp, sb, amount0);
            uint128 l1 = liquidityForAmount1(sa, sp, amount1);
            return l0 < l1 ? l0 : l1;
        }
        return liquidityForAmount1(sa, sb, amount1);
    }
}
