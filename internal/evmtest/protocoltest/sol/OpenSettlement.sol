// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {IOptionMarketLite} from "./Periphery.sol";

/// @notice As stryke-xyz/clamm's OpenSettlement (src/periphery): once the
/// market has made it a settler, anyone may settle an expired option
/// through it more than timeToSettle (2 hours) after expiry, and receives
/// whatever the settlement paid it, in both assets.
///
/// As the real one: NotExpired while expiry >= block.timestamp, then
/// TooSoonOpenSettle while block.timestamp - expiry <= timeToSettle, then
/// market.settleOption (the market pays this contract, its msg.sender),
/// then its whole balance of the call asset and of the put asset to
/// msg.sender, each only when non-zero. It approves nothing and holds
/// nothing, so a leg whose range holds the price at settlement (where the
/// market pulls the other asset from the settler) reverts through it, as
/// through the real one.
contract TestOpenSettlement is AccessControl, Multicall {
    using SafeERC20 for IERC20;

    uint256 public timeToSettle = 2 hours;

    error OpenSettlement__NotExpired();
    error OpenSettlement__TooSoonOpenSettle();

    constructor() {
        _grantRole(DEFAULT_ADMIN_ROLE, msg.sender);
    }

    function openSettle(IOptionMarketLite market, uint256 tokenId, IOptionMarketLite.SettleOptionParams calldata _params)
        public
    {
        IOptionMarketLite.OptionData memory od = market.opData(tokenId);
        if (od.expiry >= block.timestamp) revert OpenSettlement__NotExpired();
        if (block.timestamp - od.expiry <= timeToSettle) revert OpenSettlement__TooSoonOpenSettle();
        market.settleOption(_params);
        uint256 callBalance = IERC20(market.callAsset()).balanceOf(address(this));
        uint256 putBalance = IERC20(market.putAsset()).balanceOf(address(this));
        if (callBalance > 0) IERC20(market.callAsset()).safeTransfer(msg.sender, callBalance);
        if (putBalance > 0) IERC20(market.putAsset()).safeTransfer(msg.sender, putBalance);
    }

    function updateTimeToSettle(uint256 _newTime) public onlyRole(DEFAULT_ADMIN_ROLE) {
        timeToSettle = _newTime;
    }
}
