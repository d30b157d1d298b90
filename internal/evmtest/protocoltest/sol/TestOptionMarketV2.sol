// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ClammMath} from "./ClammMath.sol";
import {IHandler, IPool, ISwapper} from "./Interfaces.sol";
import {MarketBase} from "./MarketBase.sol";

/// @notice Test stand-in for DopexV2OptionMarketV2 (stryke-xyz/clamm): the same
/// ABI (functions, structs, getters, custom errors, events) and the same
/// order of operations where money and events are decided.
///
/// mintOption uses each leg's liquidity through the position manager
/// (payload with the leg's hook and the hook data (market, ttl, isCall,
/// pool, ticks)), prices the option (MarketBase: the real formula over the
/// optionPricing contract's getOptionPrice, or a deterministic price while
/// none is set), charges the protocol fee to feeTo, donates
/// the premium back to the legs pro rata and mints the ERC721.
///
/// exerciseOption runs the legs in index order: skip a zero amount; send
/// amountToSwap (the leg's L in the asset used, LiquidityAmounts rounding)
/// to the leg's swapper and call onSwapReceived; require the market's
/// balance of the asset to get to have grown by amountReq
/// (NotEnoughAfterSwap); approve amountReq and re-add the leg through
/// positionManager.unusePosition, which re-mints at the pool's price after
/// the swap (so a price inside the range makes the handler ask for the
/// used asset too, and the transfer reverts); decrement the leg's
/// liquidityToUse (checked); finally pay the total profit to msg.sender.
contract TestOptionMarketV2 is MarketBase {
    struct OptionTicks {
        IHandler _handler;
        IPool pool;
        address hook;
        int24 tickLower;
        int24 tickUpper;
        uint256 liquidityToUse;
    }

    struct OptionParams {
        OptionTicks[] optionTicks;
        int24 tickLower;
        int24 tickUpper;
        uint256 ttl;
        bool isCall;
        uint256 maxCostAllowance;
    }

    struct ExerciseOptionParams {
        uint256 optionId;
        ISwapper[] swapper;
        bytes[] swapData;
        uint256[] liquidityToExercise;
    }

    struct SettleOptionParams {
        uint256 optionId;
        ISwapper[] swapper;
        bytes[] swapData;
        uint256[] liquidityToSettle;
    }

    struct PositionSplitterParams {
        uint256 optionId;
        address to;
        uint256[] liquidityToSplit;
    }

    struct AssetsCache {
        IERC20 assetToUse;
        IERC20 assetToGet;
        uint256 totalProfit;
        uint256 totalAssetRelocked;
    }

    event LogMintOption(
        address user, uint256 tokenId, bool isCall, uint256 premiumAmount, uint256 totalAssetWithdrawn, uint256 protocolFees
    );

    error DopexV2OptionMarket__MaxOptionBuyReached();

    mapping(uint256 => OptionTicks[]) public opTickMap;

    constructor(address _pm, address _callAsset, address _putAsset, address _primePool)
        MarketBase(_pm, _callAsset, _putAsset, _primePool, "Dopex V2 Option Market V2", "DPX-V2-OM-V2")
    {}

    function mintOption(OptionParams calldata _params) external nonReentrant {
        optionIds += 1;
        if (_params.optionTicks.length > 20) revert DopexV2OptionMarket__MaxOptionBuyReached();
        uint256[] memory perLeg = new uint256[](_params.optionTicks.length);
        (uint256 total, bool isAmount0) = _useLegs(_params, perLeg);
        (uint256 premiumAmount, uint256 protocolFees) = _charge(
            _params.isCall, _params.isCall ? _params.tickUpper : _params.tickLower, total, _params.maxCostAllowance, _params.ttl
        );
        _donate(_params, perLeg, premiumAmount, total, isAmount0);
        opData[optionIds] = OptionData({
            opTickArrayLen: _params.optionTicks.length,
            tickLower: _params.tickLower,
            tickUpper: _params.tickUpper,
            expiry: block.timestamp + _params.ttl,
            isCall: _params.isCall
        });
        _safeMint(msg.sender, optionIds);
        emit LogMintOption(msg.sender, optionIds, _params.isCall, premiumAmount, total, protocolFees);
    }

    function _useLegs(OptionParams calldata _params, uint256[] memory perLeg)
        private
        returns (uint256 total, bool isAmount0)
    {
        address assetToUse = _params.isCall ? callAsset : putAsset;
        for (uint256 i; i < _params.optionTicks.length; i++) {
            OptionTicks calldata t = _params.optionTicks[i];
            if (_params.isCall ? _params.tickUpper != t.tickUpper : _params.tickLower != t.tickLower) {
                revert DopexV2OptionMarket__NotValidStrikeTick();
            }
            opTickMap[optionIds].push(t);
            if (!approvedPools[address(t.pool)]) revert DopexV2OptionMarket__PoolNotApproved();
            bytes memory data = abi.encode(
                t.pool,
                t.hook,
                t.tickLower,
                t.tickUpper,
                t.liquidityToUse,
                abi.encode(address(this), _params.ttl, _params.isCall, t.pool, t.tickLower, t.tickUpper)
            );
            (address[] memory tokens, uint256[] memory amounts,) = positionManager.usePosition(t._handler, data);
            if (tokens[0] == assetToUse) {
                require(amounts[0] > 0 && amounts[1] == 0);
                perLeg[i] = amounts[0];
                isAmount0 = true;
            } else {
                require(amounts[1] > 0 && amounts[0] == 0);
                perLeg[i] = amounts[1];
                isAmount0 = false;
            }
            total += perLeg[i];
        }
    }

    function _donate(
        OptionParams calldata _params,
        uint256[] memory perLeg,
        uint256 premiumAmount,
        uint256 total,
        bool isAmount0
    ) private {
        for (uint256 i; i < _params.optionTicks.length; i++) {
            OptionTicks calldata t = _params.optionTicks[i];
            uint256 earned = (perLeg[i] * premiumAmount) / total;
            uint128 liquidityToDonate = ClammMath.liquidityForAmounts(
                _sqrtPrice(t.pool),
                ClammMath.sqrtRatioAtTick(t.tickLower),
                ClammMath.sqrtRatioAtTick(t.tickUpper),
                isAmount0 ? earned : 0,
                isAmount0 ? 0 : earned
            );
            positionManager.donateToPosition(
                t._handler, abi.encode(t.pool, t.hook, t.tickLower, t.tickUpper, liquidityToDonate)
            );
        }
    }

    function exerciseOption(ExerciseOptionParams calldata _params)
        external
        nonReentrant
        returns (AssetsCache memory ac)
    {
        (uint256 legs, bool isAmount0, IERC20 use, IERC20 get) =
            _exerciseStart(_params.optionId, _params.liquidityToExercise.length);
        (ac.assetToUse, ac.assetToGet) = (use, get);
        for (uint256 i; i < legs; i++) {
            if (_params.liquidityToExercise[i] == 0) continue;
            _exerciseLeg(
                opTickMap[_params.optionId][i], _params.swapper[i], _params.swapData[i], _params.liquidityToExercise[i], isAmount0, ac
            );
        }
        ac.assetToGet.transfer(msg.sender, ac.totalProfit);
        emit LogExerciseOption(ownerOf(_params.optionId), _params.optionId, ac.totalProfit, ac.totalAssetRelocked);
    }

    /// @dev One leg: swap, check amountReq arrived, re-add through the position
    /// manager at the post-swap price, decrement, add the surplus to the profit.
    function _exerciseLeg(
        OptionTicks storage t,
        ISwapper swapper,
        bytes calldata swapData,
        uint256 liq,
        bool isAmount0,
        AssetsCache memory ac
    ) private {
        (uint256 amountToSwap, uint256 amountReq) = _legAmounts(t.tickLower, t.tickUpper, liq, isAmount0);
        ac.totalAssetRelocked += amountToSwap;
        uint256 prev = ac.assetToGet.balanceOf(address(this));
        ac.assetToUse.transfer(address(swapper), amountToSwap);
        swapper.onSwapReceived(address(ac.assetToUse), address(ac.assetToGet), amountToSwap, swapData);
        uint256 current = ac.assetToGet.balanceOf(address(this));
        if (current < prev + amountReq) revert DopexV2OptionMarket__NotEnoughAfterSwap();
        ac.assetToGet.approve(address(positionManager), amountReq);
        _unuse(t, liq);
        ac.totalProfit += current - (prev + amountReq);
    }

    /// @dev Re-adds the leg's liquidity through the position manager (the
    /// handler re-mints at the pool's current price) and takes it off the leg.
    function _unuse(OptionTicks storage t, uint256 liq) private {
        positionManager.unusePosition(t._handler, abi.encode(t.pool, t.hook, t.tickLower, t.tickUpper, liq, abi.encode("")));
        t.liquidityToUse -= liq;
    }

    /// @notice Settles expired options (approved settlers only), as the real V2:
    /// legs out of range on the used side are re-added as they are, legs out
    /// of range on the other side are swapped back (the surplus to the
    /// settler), legs in range take the missing part from the settler.
    function settleOption(SettleOptionParams calldata _params) external nonReentrant {
        if (!settlers[msg.sender]) revert DopexV2OptionMarket__NotApprovedSettler();
        OptionData memory oData = opData[_params.optionId];
        if (oData.opTickArrayLen != _params.liquidityToSettle.length) revert DopexV2OptionMarket__ArrayLenMismatch();
        if (block.timestamp <= oData.expiry) revert DopexV2OptionMarket__OptionNotExpired();
        bool isAmount0 = oData.isCall ? primePool.token0() == callAsset : primePool.token0() == putAsset;
        AssetsCache memory ac;
        ac.assetToUse = IERC20(oData.isCall ? callAsset : putAsset);
        ac.assetToGet = IERC20(oData.isCall ? putAsset : callAsset);
        for (uint256 i; i < oData.opTickArrayLen; i++) {
            uint256 liq = _params.liquidityToSettle[i];
            if (liq == 0) continue;
            OptionTicks storage t = opTickMap[_params.optionId][i];
            _settleLeg(t, liq, isAmount0, ac, _params.swapper[i], _params.swapData[i]);
            _unuse(t, liq);
        }
        emit LogSettleOption(ownerOf(_params.optionId), _params.optionId);
    }

    function _settleLeg(
        OptionTicks storage t,
        uint256 liq,
        bool isAmount0,
        AssetsCache memory ac,
        ISwapper swapper,
        bytes calldata swapData
    ) private {
        (uint256 amount0, uint256 amount1) = ClammMath.amountsForLiquidity(
            _sqrtPrice(t.pool), ClammMath.sqrtRatioAtTick(t.tickLower), ClammMath.sqrtRatioAtTick(t.tickUpper), uint128(liq)
        );
        (uint256 used, uint256 other) = isAmount0 ? (amount0, amount1) : (amount1, amount0);
        (uint256 full, uint256 req) = _legAmounts(t.tickLower, t.tickUpper, liq, isAmount0);
        if (used > 0 && other == 0) {
            ac.assetToUse.approve(address(positionManager), used);
        } else if (other > 0 && used == 0) {
            uint256 prev = ac.assetToGet.balanceOf(address(this));
            ac.assetToUse.transfer(address(swapper), full);
            swapper.onSwapReceived(address(ac.assetToUse), address(ac.assetToGet), full, swapData);
            uint256 current = ac.assetToGet.balanceOf(address(this));
            if (current < prev + req) revert DopexV2OptionMarket__NotEnoughAfterSwap();
            ac.assetToGet.approve(address(positionManager), req);
            ac.assetToGet.transfer(msg.sender, current - (prev + req));
        } else {
            ac.assetToUse.approve(address(positionManager), used);
            ac.assetToGet.approve(address(positionManager), other);
            ac.assetToGet.transferFrom(msg.sender, address(this), other);
            ac.assetToUse.transfer(msg.sender, full - used);
        }
    }

    function positionSplitter(PositionSplitterParams calldata _params) external nonReentrant {
        optionIds += 1;
        if (ownerOf(_params.optionId) != msg.sender) revert DopexV2OptionMarket__NotOwnerOrDelegator();
        OptionData memory oData = opData[_params.optionId];
        if (oData.opTickArrayLen != _params.liquidityToSplit.length) revert DopexV2OptionMarket__ArrayLenMismatch();
        for (uint256 i; i < _params.liquidityToSplit.length; i++) {
            if (_params.liquidityToSplit[i] == 0) revert DopexV2OptionMarket__EmptyOption();
            OptionTicks storage t = opTickMap[_params.optionId][i];
            t.liquidityToUse -= _params.liquidityToSplit[i];
            opTickMap[optionIds].push(
                OptionTicks(t._handler, t.pool, t.hook, t.tickLower, t.tickUpper, _params.liquidityToSplit[i])
            );
        }
        opData[optionIds] = OptionData(_params.liquidityToSplit.length, oData.tickLower, oData.tickUpper, oData.expiry, oData.isCall);
        _safeMint(_params.to, optionIds);
        emit LogSplitOption(ownerOf(_params.optionId), _params.optionId, optionIds, _params.to);
    }

    function getPremiumAmount(bool isPut, uint256 expiry, uint256 strike, uint256 lastPrice, uint256 amount)
        external
        view
        returns (uint256)
    {
        return _getPremiumAmount(isPut, expiry, strike, lastPrice, amount);
    }
}
