// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/security/ReentrancyGuard.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ClammMath} from "./ClammMath.sol";
import {ISwapper} from "./Interfaces.sol";
import {TestOptionMarketV2 as Market} from "./TestOptionMarketV2.sol";

/// @notice stryke-xyz/clamm's IValidator: an order's optional hook.
interface ILimitOrdersValidator {
    function beforeFullfillment(LimitOrders.Order calldata order) external;
    function afterFullfillment(LimitOrders.Order calldata order) external;
}

/// @notice Test stand-in for stryke-xyz/clamm's LimitOrders
/// (src/periphery/limit-orders/LimitOrders.sol at 5c270f8), written from
/// reading it: the same EIP-712 domain ("Stryke Limit Orders", "1"), Order
/// type and struct hash (keccak256 of data), the same public views
/// (getOrderStructHash, computeDigest, getOrderSigner, isOrderCancelled,
/// eip712Domain), flags, custom errors, events and order of checks, and the
/// same payments:
///
/// - exerciseOption: exercises the maker's option whole (every leg whose
///   amount owed in the other asset over its range is non-zero), pays the
///   maker exactly minProfit and the filler the rest (the commission);
/// - purchaseOption: pulls maxCostAllowance and the commission (to the
///   filler) from the maker, mints the option, hands it to the maker and
///   refunds the unspent allowance;
/// - fillOffer: an OTC sale (payment from the filler, the option to it);
/// - cancel: by whoever signed the six fields (the maker is not compared);
/// - a fill marks the struct hash used exactly like a cancel.
///
/// The market's structs are the V2 stand-in's (TestOptionMarketV2), whose
/// ABI is the real market's. It differs from the real one in: Solidity 0.8.26 and OpenZeppelin 4.9.6
/// (the real: 0.8.15, 4.9.0; ECDSA and EIP712 behave the same), and no
/// matchOrders (no route of the gateway builds a bid).
contract LimitOrders is EIP712("Stryke Limit Orders", "1"), ReentrancyGuard, Multicall {
    using SafeERC20 for IERC20;

    struct Order {
        uint256 createdAt;
        uint256 deadline;
        address maker;
        address validator;
        uint32 flags;
        bytes data;
    }

    struct Signature {
        bytes32 r;
        bytes32 s;
        uint8 v;
    }

    struct ExerciseOptionsSwapData {
        ISwapper[] swapper;
        bytes[] swapData;
    }

    struct BlockTradeOrder {
        uint256 payment;
        uint256 tokenId;
        address optionMarket;
        IERC20 token;
        address taker;
    }

    struct PurchaseOrder {
        uint256 maxCostAllowance;
        uint256 ttl;
        address optionMarket;
        uint256 liquidity;
        uint256 comission;
        uint256 ttlThreshold;
        int24 tickLower;
        int24 tickUpper;
        bool isCall;
    }

    uint32 internal constant OTC_FLAG = 0x00000001;
    uint32 internal constant MARKET_FILL_FLAG = 0x00000010;
    uint32 internal constant SELL_OPTIONS_FLAG = 0x00000100;
    uint32 internal constant BUY_OPTIONS_FLAG = 0x00000200;

    bytes32 internal constant ORDER_TYPEHASH =
        keccak256("Order(uint256 createdAt,uint256 deadline,address maker,address validator,uint32 flags,bytes data)");

    mapping(bytes32 => bool) public isOrderCancelled;

    error LimitOrders__VerificationFailed();
    error LimitOrders__OrderCancelled();
    error LimitOrders__OrderExpired();
    error LimitOrders__OrderRequirementsNotMet();
    error LimitOrders__InvalidFullfillment();
    error LimitOrders__SignerOrderMismatch();

    event LogFillOffer(Order order, address executor);
    event LogOrdersMatched(Order makerOrder, Order takerOrder, uint256 comission, address executor);
    event LogPurchasedOrderFilled(Order order, uint256 comission, address executor);
    event LogExerciseOrderFilled(Order order, uint256 comission, address executor);
    event LogOrderCancelled(Order order);

    modifier onFullfillment(Order memory order, Signature calldata sig) {
        _before(order, sig);
        _;
        _after(order);
    }

    function _has(Order memory order, uint32 a, uint32 b) private pure returns (bool) {
        return order.flags & a != 0 && order.flags & b != 0;
    }

    /// @notice Sells the maker's option to an anyone-may-take buyer for
    /// `payment` of `token` (SELL + OTC).
    function fillOffer(Order memory order, Signature calldata sig) external onFullfillment(order, sig) {
        if (!_has(order, SELL_OPTIONS_FLAG, OTC_FLAG)) revert LimitOrders__InvalidFullfillment();
        BlockTradeOrder memory bt = abi.decode(order.data, (BlockTradeOrder));
        if (bt.taker != address(0) && msg.sender != bt.taker) revert LimitOrders__OrderRequirementsNotMet();
        bt.token.safeTransferFrom(msg.sender, order.maker, bt.payment);
        Market(bt.optionMarket).transferFrom(order.maker, msg.sender, bt.tokenId);
        emit LogFillOffer(order, msg.sender);
    }

    /// @notice Buys the option a limit purchase describes (BUY + MARKET_FILL)
    /// through the filler's legs; returns the commission paid to the filler.
    function purchaseOption(Order memory order, Signature calldata sig, Market.OptionTicks[] calldata opTicks)
        external
        onFullfillment(order, sig)
        nonReentrant
        returns (uint256)
    {
        if (!_has(order, BUY_OPTIONS_FLAG, MARKET_FILL_FLAG)) revert LimitOrders__InvalidFullfillment();
        PurchaseOrder memory po = abi.decode(order.data, (PurchaseOrder));
        uint256 total;
        for (uint256 i; i < opTicks.length; i++) {
            total += opTicks[i].liquidityToUse;
        }
        if (total != po.liquidity) revert LimitOrders__OrderRequirementsNotMet();
        Market market = Market(po.optionMarket);
        IERC20 premium = IERC20(po.isCall ? market.callAsset() : market.putAsset());
        premium.safeTransferFrom(order.maker, address(this), po.maxCostAllowance);
        premium.safeTransferFrom(order.maker, msg.sender, po.comission);
        uint256 before = premium.balanceOf(address(this));
        uint256 optionId = market.optionIds() + 1;
        premium.safeIncreaseAllowance(address(market), po.maxCostAllowance);
        market.mintOption(
            Market.OptionParams({
                optionTicks: opTicks,
                tickLower: po.tickLower,
                tickUpper: po.tickUpper,
                ttl: po.ttl,
                isCall: po.isCall,
                maxCostAllowance: po.maxCostAllowance
            })
        );
        market.transferFrom(address(this), order.maker, optionId);
        uint256 spent = before - premium.balanceOf(address(this));
        if (spent < po.maxCostAllowance) premium.safeTransfer(order.maker, po.maxCostAllowance - spent);
        emit LogPurchasedOrderFilled(order, po.comission, msg.sender);
        return po.comission;
    }

    /// @notice Exercises the maker's option whole once its profit reaches
    /// minProfit (SELL + MARKET_FILL): the maker gets minProfit, the filler
    /// (who chose the swaps) the rest, which is returned.
    function exerciseOption(Order memory order, Signature calldata sig, ExerciseOptionsSwapData calldata swaps)
        external
        onFullfillment(order, sig)
        nonReentrant
        returns (uint256 comission)
    {
        (uint256 minProfit, uint256 tokenId, Market market) =
            abi.decode(order.data, (uint256, uint256, Market));
        if (!_has(order, SELL_OPTIONS_FLAG, MARKET_FILL_FLAG)) revert LimitOrders__InvalidFullfillment();
        uint256[] memory liquidity = _wholeLegs(market, tokenId);
        if (market.ownerOf(tokenId) != order.maker) revert LimitOrders__VerificationFailed();
        Market.AssetsCache memory ac = market.exerciseOption(
            Market.ExerciseOptionParams({
                optionId: tokenId,
                swapper: swaps.swapper,
                swapData: swaps.swapData,
                liquidityToExercise: liquidity
            })
        );
        if (ac.totalProfit < minProfit) revert LimitOrders__OrderRequirementsNotMet();
        comission = ac.totalProfit - minProfit;
        if (comission > 0) IERC20(address(ac.assetToGet)).safeTransfer(msg.sender, comission);
        IERC20(address(ac.assetToGet)).safeTransfer(order.maker, minProfit);
        emit LogExerciseOrderFilled(order, comission, msg.sender);
    }

    /// @dev Each leg's remaining liquidity when the leg owes its LPs a
    /// non-zero amount of the other asset over its whole range, else 0.
    function _wholeLegs(Market market, uint256 tokenId) private view returns (uint256[] memory liquidity) {
        (uint256 legs,,,, bool isCall) = market.opData(tokenId);
        address token0 = market.primePool().token0();
        bool isAmount0 = isCall ? token0 == market.callAsset() : token0 == market.putAsset();
        liquidity = new uint256[](legs);
        for (uint256 i; i < legs; i++) {
            (,,, int24 lower, int24 upper, uint256 left) = market.opTickMap(tokenId, i);
            uint160 sa = ClammMath.sqrtRatioAtTick(lower);
            uint160 sb = ClammMath.sqrtRatioAtTick(upper);
            uint256 owed = isAmount0
                ? ClammMath.amount1ForLiquidity(sa, sb, uint128(left))
                : ClammMath.amount0ForLiquidity(sa, sb, uint128(left));
            if (owed != 0) liquidity[i] = left;
        }
    }

    /// @notice Marks the order used; only its signer may (the maker is not compared).
    function cancel(Order memory order, Signature memory sig) public {
        if (msg.sender != getOrderSigner(order, sig)) revert LimitOrders__VerificationFailed();
        isOrderCancelled[getOrderStructHash(order)] = true;
        emit LogOrderCancelled(order);
    }

    function _before(Order memory order, Signature calldata sig) private {
        bytes32 h = getOrderStructHash(order);
        if (order.maker != getOrderSigner(order, sig)) revert LimitOrders__VerificationFailed();
        if (order.deadline < block.timestamp) revert LimitOrders__OrderExpired();
        if (isOrderCancelled[h]) revert LimitOrders__OrderCancelled();
        if (order.validator != address(0)) ILimitOrdersValidator(order.validator).beforeFullfillment(order);
    }

    function _after(Order memory order) private {
        if (order.validator != address(0)) ILimitOrdersValidator(order.validator).afterFullfillment(order);
        isOrderCancelled[getOrderStructHash(order)] = true;
    }

    function onERC721Received(address, address, uint256, bytes memory) external pure returns (bytes4) {
        return this.onERC721Received.selector;
    }

    function getOrderSigner(Order memory order, Signature memory sig) public view returns (address) {
        return ECDSA.recover(computeDigest(order), sig.v, sig.r, sig.s);
    }

    function computeDigest(Order memory order) public view returns (bytes32) {
        return _hashTypedDataV4(getOrderStructHash(order));
    }

    function getOrderStructHash(Order memory order) public pure returns (bytes32) {
        return keccak256(
            abi.encode(
                ORDER_TYPEHASH, order.createdAt, order.deadline, order.maker, order.validator, order.flags, keccak256(order.data)
            )
        );
    }
}
