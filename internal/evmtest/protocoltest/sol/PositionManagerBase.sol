// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/security/ReentrancyGuard.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {IHandler} from "./Interfaces.sol";

/// @notice What the test stand-ins for DopexV2PositionManager and
/// DopexV2PositionManagerV2 (stryke-xyz/clamm) share: the same ABI, events
/// and routing. Apps (option markets) reach a handler only when the pair
/// keccak256(abi.encode(handler, app)) is whitelisted; liquidity providers
/// reach whitelisted handlers. Tokens move as in the real ones: pulled from
/// the caller into the manager, allowance raised for the handler, which
/// pulls them in its Uniswap mint callback; used liquidity is collected to
/// the manager and forwarded to the app. OpenZeppelin's Multicall, as the
/// real ones inherit it: multicall(bytes[]) delegatecalls each call into
/// the manager itself, so msg.sender stays the liquidity provider and
/// several mintPosition calls go in one transaction. The custom errors are
/// each generation's own (_notApp, _notHandler).
abstract contract PositionManagerBase is Ownable, ReentrancyGuard, Multicall {
    using SafeERC20 for IERC20;

    mapping(bytes32 => bool) public whitelistedHandlersWithApp;
    mapping(address => bool) public whitelistedHandlers;

    event LogMintPosition(IHandler _handler, uint256 tokenId, address user, uint256 sharesMinted);
    event LogBurnPosition(IHandler _handler, uint256 tokenId, address user, uint256 sharesBurned);
    event LogUsePosition(IHandler _handler, uint256 liquidityUsed);
    event LogUnusePosition(IHandler _handler, uint256 liquidityUnused);
    event LogDonation(IHandler _handler, uint256 liquidityDonated);
    event LogUpdateWhitelistHandlerWithApp(address _handler, address _app, bool _status);
    event LogUpdateWhitelistHandler(address _handler, bool _status);

    /// @dev Reverts with the generation's NotWhitelistedApp.
    function _notApp() internal pure virtual;

    /// @dev Reverts with the generation's NotWhitelistedHandler.
    function _notHandler() internal pure virtual;

    modifier onlyApp(IHandler h) {
        if (!whitelistedHandlersWithApp[keccak256(abi.encode(address(h), msg.sender))]) {
            _notApp();
        }
        _;
    }

    modifier onlyHandler(IHandler h) {
        if (!whitelistedHandlers[address(h)]) _notHandler();
        _;
    }

    /// @dev Pulls each nonzero amount from the caller and lets the handler spend it.
    function _pull(IHandler h, address[] memory tokens, uint256[] memory amounts) private {
        for (uint256 i; i < tokens.length; i++) {
            if (amounts[i] != 0) {
                IERC20(tokens[i]).safeTransferFrom(msg.sender, address(this), amounts[i]);
                IERC20(tokens[i]).safeIncreaseAllowance(address(h), amounts[i]);
            }
        }
    }

    function mintPosition(IHandler _handler, bytes calldata _data)
        external
        onlyHandler(_handler)
        nonReentrant
        returns (uint256 sharesMinted)
    {
        uint256 tokenId = _handler.getHandlerIdentifier(_data);
        (address[] memory tokens, uint256[] memory amounts) = _handler.tokensToPullForMint(_data);
        _pull(_handler, tokens, amounts);
        sharesMinted = _handler.mintPositionHandler(msg.sender, _data);
        emit LogMintPosition(_handler, tokenId, msg.sender, sharesMinted);
    }

    function burnPosition(IHandler _handler, bytes calldata _data)
        external
        onlyHandler(_handler)
        nonReentrant
        returns (uint256 sharesBurned)
    {
        uint256 tokenId = _handler.getHandlerIdentifier(_data);
        sharesBurned = _handler.burnPositionHandler(msg.sender, _data);
        emit LogBurnPosition(_handler, tokenId, msg.sender, sharesBurned);
    }

    function usePosition(IHandler _handler, bytes calldata _data)
        external
        onlyApp(_handler)
        nonReentrant
        returns (address[] memory tokens, uint256[] memory amounts, uint256 liquidityUsed)
    {
        (tokens, amounts, liquidityUsed) = _handler.usePositionHandler(_data);
        for (uint256 i; i < tokens.length; i++) {
            if (amounts[i] != 0) IERC20(tokens[i]).safeTransfer(msg.sender, amounts[i]);
        }
        emit LogUsePosition(_handler, liquidityUsed);
    }

    function unusePosition(IHandler _handler, bytes calldata _data)
        external
        onlyApp(_handler)
        nonReentrant
        returns (uint256[] memory amounts, uint256 liquidity)
    {
        (address[] memory tokens, uint256[] memory a) = _handler.tokensToPullForUnUse(_data);
        _pull(_handler, tokens, a);
        (amounts, liquidity) = _handler.unusePositionHandler(_data);
        emit LogUnusePosition(_handler, liquidity);
    }

    function donateToPosition(IHandler _handler, bytes calldata _data)
        external
        onlyApp(_handler)
        nonReentrant
        returns (uint256[] memory amounts, uint256 liquidity)
    {
        (address[] memory tokens, uint256[] memory a) = _handler.tokensToPullForDonate(_data);
        _pull(_handler, tokens, a);
        (amounts, liquidity) = _handler.donateToPosition(_data);
        emit LogDonation(_handler, liquidity);
    }

    function updateWhitelistHandlerWithApp(address _handler, address _app, bool _status) external onlyOwner {
        whitelistedHandlersWithApp[keccak256(abi.encode(_handler, _app))] = _status;
        emit LogUpdateWhitelistHandlerWithApp(_handler, _app, _status);
    }

    function updateWhitelistHandler(address _handler, bool _status) external onlyOwner {
        whitelistedHandlers[_handler] = _status;
        emit LogUpdateWhitelistHandler(_handler, _status);
    }
}
