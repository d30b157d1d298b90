// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {PositionManagerBase} from "./PositionManagerBase.sol";

/// @notice Test stand-in for DopexV2PositionManager (2024): the shared
/// PositionManagerBase with its custom errors. A liquidity provider reserves
/// liquidity of a V2 handler by calling the handler itself.
contract TestPositionManager is PositionManagerBase {
    error DopexV2PositionManager__NotWhitelistedApp();
    error DopexV2PositionManager__NotWhitelistedHandler();

    function _notApp() internal pure override {
        revert DopexV2PositionManager__NotWhitelistedApp();
    }

    function _notHandler() internal pure override {
        revert DopexV2PositionManager__NotWhitelistedHandler();
    }
}
