// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IHandler, IHandlerV3} from "./Interfaces.sol";
import {TestPositionManagerV2} from "./TestPositionManagerV2.sol";

/// @notice Test stand-in for DopexV2PositionManagerV2 as stryke-xyz/clamm
/// 80766cc (January 2025) wrote it, before 5c270f8 (April 2025) corrected
/// one line: its withdrawReserveLiquidity(handler, data) calls the
/// handler's reserveLiquidity(caller, data), not withdrawReserveLiquidity.
/// Sent by a holder, it reserves `data`'s amount of the holder's shares
/// (restarting the cooldown of everything reserved) instead of paying out
/// reserved liquidity; without enough shares it reverts.
contract TestPositionManagerV2Jan2025 is TestPositionManagerV2 {
    function withdrawReserveLiquidity(IHandlerV3 _handler, bytes calldata _data)
        external
        override
        onlyHandler(IHandler(address(_handler)))
        nonReentrant
    {
        _handler.reserveLiquidity(msg.sender, _data);
    }
}
