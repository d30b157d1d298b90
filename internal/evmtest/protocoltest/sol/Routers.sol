// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IERC721} from "@openzeppelin/contracts/token/ERC721/IERC721.sol";
import {IERC721Receiver} from "@openzeppelin/contracts/token/ERC721/IERC721Receiver.sol";

/// @notice The option markets' functions the router calls. OptionParams of
/// the V2 market (legs with a hook) and of the V1 market (legs without).
interface IRoutedMarket {
    struct OptionTicksV2 {
        address _handler;
        address pool;
        address hook;
        int24 tickLower;
        int24 tickUpper;
        uint256 liquidityToUse;
    }

    struct OptionParamsV2 {
        OptionTicksV2[] optionTicks;
        int24 tickLower;
        int24 tickUpper;
        uint256 ttl;
        bool isCall;
        uint256 maxCostAllowance;
    }

    struct OptionTicksV1 {
        address _handler;
        address pool;
        int24 tickLower;
        int24 tickUpper;
        uint256 liquidityToUse;
    }

    struct OptionParamsV1 {
        OptionTicksV1[] optionTicks;
        int24 tickLower;
        int24 tickUpper;
        uint256 ttl;
        bool isCall;
        uint256 maxCostAllowance;
    }

    function callAsset() external view returns (address);
    function putAsset() external view returns (address);
    function optionIds() external view returns (uint256);
}

/// @notice The handler and position manager calls ClammRouterV2.mintPosition makes.
interface IRoutedLP {
    function getHandlerIdentifier(bytes calldata data) external view returns (uint256);
    function tokensToPullForMint(bytes calldata data) external view returns (address[] memory, uint256[] memory);
    function transfer(address to, uint256 id, uint256 amount) external returns (bool);
    function mintPosition(address handler, bytes calldata data) external returns (uint256);
}

/// @notice As stryke-xyz/clamm's ClammRouterV2.mintOption: pulls
/// maxCostAllowance of the premium asset from the caller, approves the market,
/// calls mintOption (the market mints the option to this router and emits
/// LogMintOption naming the router as its user), reads the new id from
/// optionIds(), hands the NFT to `receiver` (safeTransferFrom, after the
/// market's event), refunds what is left and emits its own LogMintOption.
/// mintOptionV1 does the same with the V1 market's OptionParams.
///
/// mintPosition is ClammRouterV2.mintPosition: it reads the range's id
/// (getHandlerIdentifier) and what the handler pulls (tokensToPullForMint),
/// pulls those amounts from the caller into itself, raises the position
/// manager's allowance by them, calls the position manager's mintPosition
/// as itself (so the handler mints the shares to the router and its
/// LogMintedPosition names the router as user), then transfers the shares
/// minted to `receiver` (ERC-6909 transfer) and emits LogMintPosition. The
/// position manager is set by the owner (setDopexV2PositionManager).
contract TestClammRouterV2 is IERC721Receiver {
    using SafeERC20 for IERC20;

    address public dopexV2PositionManager;
    address public immutable owner;

    error NotOwner();

    event LogMintOption(
        address user, address receiver, address optionMarket, uint256 tokenId, bytes32 frontendId, bytes32 referralId
    );

    event LogMintPosition(
        address _handler,
        uint256 tokenId,
        address user,
        address receiver,
        uint256 sharesMinted,
        bytes32 frontendId,
        bytes32 referralId
    );

    constructor() {
        owner = msg.sender;
    }

    function setDopexV2PositionManager(address _dopexV2PositionManager) external {
        if (msg.sender != owner) revert NotOwner();
        dopexV2PositionManager = _dopexV2PositionManager;
    }

    function mintPosition(
        address _handler,
        bytes calldata _mintPositionData,
        address receiver,
        bytes32 frontendId,
        bytes32 referralId
    ) external returns (uint256 sharesMinted) {
        uint256 tokenId = IRoutedLP(_handler).getHandlerIdentifier(_mintPositionData);
        (address[] memory tokens, uint256[] memory amounts) = IRoutedLP(_handler).tokensToPullForMint(_mintPositionData);
        for (uint256 i; i < tokens.length; i++) {
            if (amounts[i] != 0) {
                IERC20(tokens[i]).safeTransferFrom(msg.sender, address(this), amounts[i]);
                IERC20(tokens[i]).safeIncreaseAllowance(dopexV2PositionManager, amounts[i]);
            }
        }
        sharesMinted = IRoutedLP(dopexV2PositionManager).mintPosition(_handler, _mintPositionData);
        IRoutedLP(_handler).transfer(receiver, tokenId, sharesMinted);
        emit LogMintPosition(_handler, tokenId, msg.sender, receiver, sharesMinted, frontendId, referralId);
    }

    function onERC721Received(address, address, uint256, bytes memory) public pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    function mintOption(
        IRoutedMarket.OptionParamsV2 calldata _params,
        address optionMarket,
        address receiver,
        bytes32 frontendId,
        bytes32 referralId
    ) external {
        bytes memory call = abi.encodeWithSignature(
            "mintOption(((address,address,address,int24,int24,uint256)[],int24,int24,uint256,bool,uint256))", _params
        );
        _route(call, _params.isCall, _params.maxCostAllowance, optionMarket, receiver, frontendId, referralId);
    }

    function mintOptionV1(
        IRoutedMarket.OptionParamsV1 calldata _params,
        address optionMarket,
        address receiver,
        bytes32 frontendId,
        bytes32 referralId
    ) external {
        bytes memory call = abi.encodeWithSignature(
            "mintOption(((address,address,int24,int24,uint256)[],int24,int24,uint256,bool,uint256))", _params
        );
        _route(call, _params.isCall, _params.maxCostAllowance, optionMarket, receiver, frontendId, referralId);
    }

    function _route(
        bytes memory call,
        bool isCall,
        uint256 maxCost,
        address optionMarket,
        address receiver,
        bytes32 frontendId,
        bytes32 referralId
    ) private {
        IERC20 token = IERC20(isCall ? IRoutedMarket(optionMarket).callAsset() : IRoutedMarket(optionMarket).putAsset());
        token.safeTransferFrom(msg.sender, address(this), maxCost);
        token.approve(optionMarket, maxCost);
        (bool ok, bytes memory ret) = optionMarket.call(call);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        uint256 tokenId = IRoutedMarket(optionMarket).optionIds();
        IERC721(optionMarket).safeTransferFrom(address(this), receiver, tokenId);
        token.safeTransfer(msg.sender, token.balanceOf(address(this)));
        emit LogMintOption(msg.sender, receiver, optionMarket, tokenId, frontendId, referralId);
    }
}

/// @notice A minimal smart-contract wallet (as a Safe or an ERC-4337 account
/// acts on chain): its owner has it call any contract, so the wallet is
/// msg.sender there while the transaction's sender is the owner's key. It
/// holds option NFTs (onERC721Received) and tokens.
contract TestSmartWallet is IERC721Receiver {
    address public immutable owner;

    error NotOwner();

    constructor(address _owner) {
        owner = _owner;
    }

    function execute(address to, bytes calldata data) external returns (bytes memory) {
        if (msg.sender != owner) revert NotOwner();
        (bool ok, bytes memory ret) = to.call(data);
        if (!ok) {
            assembly {
                revert(add(ret, 32), mload(ret))
            }
        }
        return ret;
    }

    function onERC721Received(address, address, uint256, bytes memory) public pure returns (bytes4) {
        return this.onERC721Received.selector;
    }
}
