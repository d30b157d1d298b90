// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {TestPricingBase, testOptionPrice} from "./Pricing.sol";

/// @notice Test stand-in for stryke-xyz/clamm's OptionPricingLinearV2, the
/// generation before OptionPricingLinearV2_1, with what a gateway can
/// observe of it:
///   - an IV table per ttl (ttlToVol, updateIVs by IV setters); an unset
///     ttl is a bare revert;
///   - getVolatility(strike, lastPrice, volatility) with three arguments
///     and no 4-argument one: the IV scaled by one offset and multiplier
///     for every ttl (1e4 precision), by the strike's distance from the
///     price in 1e6 of the price, and no xSYK discount: scale = offset +
///     |strike * 1e6 / lastPrice - 1e6| * multiplier / 1e4, IV * scale / 1e4,
///     each division rounding down as the real one's;
///   - getOptionPrice(isPut, expiry, strike, lastPrice) and
///     getOptionPriceViaTTL priced at that IV, floored at
///     minOptionPricePercentage (1e10 = 100%) of lastPrice.
/// The price model is the test protocol's (testOptionPrice), not
/// Black-Scholes: the gateway reads prices, never computes them.
contract TestOptionPricingLinearV2 is Ownable, TestPricingBase {
    uint256 public constant VOLATILITY_PRECISION = 1e4;

    uint256 public volatilityOffset;
    uint256 public volatilityMultiplier;
    uint256 public minOptionPricePercentage;

    mapping(uint256 => uint256) public ttlToVol;
    mapping(address => bool) public ivSetter;

    error NotIVSetter();

    constructor(uint256 _volatilityOffset, uint256 _volatilityMultiplier, uint256 _minOptionPricePercentage) {
        volatilityOffset = _volatilityOffset;
        volatilityMultiplier = _volatilityMultiplier;
        minOptionPricePercentage = _minOptionPricePercentage;
        ivSetter[msg.sender] = true;
    }

    function updateIVs(uint256[] calldata _ttls, uint256[] calldata _ttlIVs) external {
        if (!ivSetter[msg.sender]) revert NotIVSetter();
        for (uint256 i; i < _ttls.length; i++) {
            ttlToVol[_ttls[i]] = _ttlIVs[i];
        }
    }

    function getVolatility(uint256 strike, uint256 lastPrice, uint256 volatility) public view returns (uint256) {
        uint256 ratio = (strike * 1e6) / lastPrice; // 1e6 is the price itself
        uint256 dist = ratio > 1e6 ? ratio - 1e6 : 1e6 - ratio;
        uint256 scale = volatilityOffset + (dist * volatilityMultiplier) / VOLATILITY_PRECISION;
        return (volatility * scale) / VOLATILITY_PRECISION;
    }

    function _price(bool isPut, uint256 ttl, uint256 strike, uint256 lastPrice) internal view override returns (uint256) {
        uint256 iv = ttlToVol[ttl];
        if (iv == 0) revert();
        return testOptionPrice(isPut, ttl, strike, lastPrice, getVolatility(strike, lastPrice, iv), minOptionPricePercentage);
    }
}
