// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IHandler, IHandlerV3} from "./Interfaces.sol";
import {PositionManagerBase} from "./PositionManagerBase.sol";

/// @notice Test stand-in for DopexV2PositionManagerV2 (stryke-xyz/clamm
/// 80766cc): the shared PositionManagerBase with its own custom errors, and
/// the two pass-throughs a V3 handler's reservations go through:
/// reserveLiquidity(handler, data) and withdrawReserveLiquidity(handler,
/// data) call the handler with the caller as the account, for a handler
/// whitelisted here (as mintPosition and burnPosition), under the
/// reentrancy guard. They emit no event of their own (the handler logs
/// LogBurnedPosition, LogReservedLiquidity, LogWithdrawReservedLiquidity)
/// and, like the real ones, return nothing.
contract TestPositionManagerV2 is PositionManagerBase {
    error DopexV2PositionManagerV2__NotWhitelistedApp();
    error DopexV2PositionManagerV2__NotWhitelistedHandler();

    function reserveLiquidity(IHandlerV3 _handler, bytes calldata _data)
        external
        onlyHandler(IHandler(address(_handler)))
        nonReentrant
    {
        _handler.reserveLiquidity(msg.sender, _data);
    }

    function withdrawReserveLiquidity(IHandlerV3 _handler, bytes calldata _data)
        external
        virtual
        onlyHandler(IHandler(address(_handler)))
        nonReentrant
    {
        _handler.withdrawReserveLiquidity(msg.sender, _data);
    }

    function _notApp() internal pure override {
        revert DopexV2PositionManagerV2__NotWhitelistedApp();
    }

    function _notHandler() internal pure override {
        revert DopexV2PositionManagerV2__NotWhitelistedHandler();
    }
}
