// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {TestPricingBase, testOptionPrice} from "./Pricing.sol";

/// @notice Test stand-in for stryke-xyz/clamm's OptionPricingV2
/// (src/pricing/OptionPricingV2.sol), with what a gateway can observe of
/// it:
///   - public volatilityCap and minOptionPricePercentage, set by the
///     constructor and the owner's updateVolatilityCap and
///     updateMinOptionPricePercentage (the cap is stored, never applied,
///     as in the real one);
///   - an IV table per ttl (ttlToVol, updateIVs by IV setters, NotIVSetter
///     otherwise; ivSetter, updateIVSetter);
///   - no volatility function: getOptionPrice(isPut, expiry, strike,
///     lastPrice) prices at ttlToVol[expiry - block.timestamp] and nothing
///     else, a bare revert when it is 0, floored at minOptionPricePercentage
///     (1e10 = 100%) of lastPrice.
/// The price model is the test protocol's (testOptionPrice), not
/// Black-Scholes: the gateway reads prices, never computes them.
contract TestOptionPricingV2 is Ownable, TestPricingBase {
    uint256 public volatilityCap;
    uint256 public minOptionPricePercentage;

    mapping(uint256 => uint256) public ttlToVol;
    mapping(address => bool) public ivSetter;

    error NotIVSetter();

    constructor(uint256 _volatilityCap, uint256 _minOptionPricePercentage) {
        volatilityCap = _volatilityCap;
        minOptionPricePercentage = _minOptionPricePercentage;
        ivSetter[msg.sender] = true;
    }

    function updateVolatilityCap(uint256 _volatilityCap) external onlyOwner returns (bool) {
        volatilityCap = _volatilityCap;
        return true;
    }

    function updateMinOptionPricePercentage(uint256 _minOptionPricePercentage) external onlyOwner returns (bool) {
        minOptionPricePercentage = _minOptionPricePercentage;
        return true;
    }

    function updateIVSetter(address _setter, bool _status) external onlyOwner {
        ivSetter[_setter] = _status;
    }

    function updateIVs(uint256[] calldata _ttls, uint256[] calldata _ttlIVs) external {
        if (!ivSetter[msg.sender]) revert NotIVSetter();
        for (uint256 i; i < _ttls.length; i++) {
            ttlToVol[_ttls[i]] = _ttlIVs[i];
        }
    }

    function _price(bool isPut, uint256 ttl, uint256 strike, uint256 lastPrice) internal view override returns (uint256) {
        uint256 iv = ttlToVol[ttl];
        if (iv == 0) revert();
        return testOptionPrice(isPut, ttl, strike, lastPrice, iv, minOptionPricePercentage);
    }
}
