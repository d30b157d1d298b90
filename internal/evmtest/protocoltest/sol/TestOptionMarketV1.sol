// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ClammMath} from "./ClammMath.sol";
import {IHandler, IPool, ISwapper} from "./Interfaces.sol";
import {MarketBase} from "./MarketBase.sol";

/// @notice Test stand-in for DopexV2OptionMarket (V1, stryke-xyz/clamm): legs
/// without hooks (opTickMap is five words: handler, pool, tickLower,
/// tickUpper, liquidityToUse), handler payloads of four words (V1 handlers
/// only), a flat IV per TTL that must be set (ttlToVol, IVNotSet), the
/// 5-argument LogMintOption (no protocolFees), and an exerciseOption that
/// returns nothing and does not skip legs of zero liquidity. ERC721 name
/// "Dopex V2 Option Market". settleOption as the V2 stand-in's (the real V1
/// and V2 settle alike). Premium and fee as MarketBase.
contract TestOptionMarketV1 is MarketBase {
    struct OptionTicks {
        IHandler _handler;
        IPool pool;
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

    event LogMintOption(address user, uint256 tokenId, bool isCall, uint256 premiumAmount, uint256 totalAssetWithdrawn);
    event LogIVSetterUpdate(address _setter, bool _status);
    event LogIVUpdate(uint256[] ttl, uint256[] iv);

    mapping(uint256 => OptionTicks[]) public opTickMap;
    mapping(uint256 => uint256) public ttlToVol;
    mapping(address => bool) public ivSetter;

    constructor(address _pm, address _callAsset, address _putAsset, address _primePool)
        MarketBase(_pm, _callAsset, _putAsset, _primePool, "Dopex V2 Option Market", "DPX-V2-OM")
    {
        ivSetter[msg.sender] = true;
    }

    function mintOption(OptionParams calldata _params) external nonReentrant {
        optionIds += 1;
        if (ttlToVol[_params.ttl] == 0) revert DopexV2OptionMarket__IVNotSet();
        uint256[] memory perLeg = new uint256[](_params.optionTicks.length);
        (uint256 total, bool isAmount0) = _useLegs(_params, perLeg);
        (uint256 premiumAmount,) = _charge(
            _params.isCall, _params.isCall ? _params.tickUpper : _params.tickLower, total, _params.maxCostAllowance, _params.ttl
        );
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
            positionManager.donateToPosition(t._handler, abi.encode(t.pool, t.tickLower, t.tickUpper, liquidityToDonate));
        }
        opData[optionIds] = OptionData(
            _params.optionTicks.length, _params.tickLower, _params.tickUpper, block.timestamp + _params.ttl, _params.isCall
        );
        _safeMint(msg.sender, optionIds);
        emit LogMintOption(msg.sender, optionIds, _params.isCall, premiumAmount, total);
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
            (address[] memory tokens, uint256[] memory amounts,) =
                positionManager.usePosition(t._handler, abi.encode(t.pool, t.tickLower, t.tickUpper, t.liquidityToUse));
            isAmount0 = tokens[0] == assetToUse;
            (uint256 got, uint256 other) = isAmount0 ? (amounts[0], amounts[1]) : (amounts[1], amounts[0]);
            require(got > 0 && other == 0);
            perLeg[i] = got;
            total += got;
        }
    }

    function exerciseOption(ExerciseOptionParams calldata _params) external nonReentrant {
        (uint256 legs, bool isAmount0, IERC20 use, IERC20 get) =
            _exerciseStart(_params.optionId, _params.liquidityToExercise.length);
        uint256[2] memory totals; // profit, relocked
        for (uint256 i; i < legs; i++) {
            _exerciseLeg(
                opTickMap[_params.optionId][i],
                _params.swapper[i],
                _params.swapData[i],
                _params.liquidityToExercise[i],
                isAmount0,
                [address(use), address(get)],
                totals
            );
        }
        get.transfer(msg.sender, totals[0]);
        emit LogExerciseOption(ownerOf(_params.optionId), _params.optionId, totals[0], totals[1]);
    }

    function _exerciseLeg(
        OptionTicks storage t,
        ISwapper swapper,
        bytes calldata swapData,
        uint256 liq,
        bool isAmount0,
        address[2] memory assets,
        uint256[2] memory totals
    ) private {
        (uint256 amountToSwap, uint256 amountReq) = _legAmounts(t.tickLower, t.tickUpper, liq, isAmount0);
        totals[1] += amountToSwap;
        uint256 prev = IERC20(assets[1]).balanceOf(address(this));
        IERC20(assets[0]).transfer(address(swapper), amountToSwap);
        swapper.onSwapReceived(assets[0], assets[1], amountToSwap, swapData);
        uint256 current = IERC20(assets[1]).balanceOf(address(this));
        if (current < prev + amountReq) revert DopexV2OptionMarket__NotEnoughAfterSwap();
        IERC20(assets[1]).approve(address(positionManager), amountReq);
        _unuse(t, liq);
        totals[0] += current - (prev + amountReq);
    }

    function _unuse(OptionTicks storage t, uint256 liq) private {
        positionManager.unusePosition(t._handler, abi.encode(t.pool, t.tickLower, t.tickUpper, liq));
        t.liquidityToUse -= liq;
    }

    /// @notice Settles an expired option (approved settlers only): a leg out
    /// of range on the used side is re-added as it is; one out of range on
    /// the other side is swapped back (the surplus to the settler); one in
    /// range takes the missing part from the settler.
    function settleOption(SettleOptionParams calldata _params) external nonReentrant {
        if (!settlers[msg.sender]) revert DopexV2OptionMarket__NotApprovedSettler();
        OptionData memory oData = opData[_params.optionId];
        if (oData.opTickArrayLen != _params.liquidityToSettle.length) revert DopexV2OptionMarket__ArrayLenMismatch();
        if (block.timestamp <= oData.expiry) revert DopexV2OptionMarket__OptionNotExpired();
        bool isAmount0 = oData.isCall ? primePool.token0() == callAsset : primePool.token0() == putAsset;
        IERC20 use = IERC20(oData.isCall ? callAsset : putAsset);
        IERC20 get = IERC20(oData.isCall ? putAsset : callAsset);
        for (uint256 i; i < oData.opTickArrayLen; i++) {
            uint256 liq = _params.liquidityToSettle[i];
            if (liq == 0) continue;
            OptionTicks storage t = opTickMap[_params.optionId][i];
            _settleLeg(t, liq, isAmount0, [use, get], _params.swapper[i], _params.swapData[i]);
            _unuse(t, liq);
        }
        emit LogSettleOption(ownerOf(_params.optionId), _params.optionId);
    }

    function _settleLeg(
        OptionTicks storage t,
        uint256 liq,
        bool isAmount0,
        IERC20[2] memory assets,
        ISwapper swapper,
        bytes calldata swapData
    ) private {
        (uint256 amount0, uint256 amount1) = ClammMath.amountsForLiquidity(
            _sqrtPrice(t.pool), ClammMath.sqrtRatioAtTick(t.tickLower), ClammMath.sqrtRatioAtTick(t.tickUpper), uint128(liq)
        );
        (uint256 used, uint256 other) = isAmount0 ? (amount0, amount1) : (amount1, amount0);
        (uint256 full, uint256 req) = _legAmounts(t.tickLower, t.tickUpper, liq, isAmount0);
        if (used > 0 && other == 0) {
            assets[0].approve(address(positionManager), used);
        } else if (other > 0 && used == 0) {
            uint256 prev = assets[1].balanceOf(address(this));
            assets[0].transfer(address(swapper), full);
            swapper.onSwapReceived(address(assets[0]), address(assets[1]), full, swapData);
            uint256 current = assets[1].balanceOf(address(this));
            if (current < prev + req) revert DopexV2OptionMarket__NotEnoughAfterSwap();
            assets[1].approve(address(positionManager), req);
            assets[1].transfer(msg.sender, current - (prev + req));
        } else {
            assets[0].approve(address(positionManager), used);
            assets[1].approve(address(positionManager), other);
            assets[1].transferFrom(msg.sender, address(this), other);
            assets[0].transfer(msg.sender, full - used);
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
            opTickMap[optionIds].push(OptionTicks(t._handler, t.pool, t.tickLower, t.tickUpper, _params.liquidityToSplit[i]));
        }
        opData[optionIds] = OptionData(_params.liquidityToSplit.length, oData.tickLower, oData.tickUpper, oData.expiry, oData.isCall);
        _safeMint(_params.to, optionIds);
        emit LogSplitOption(ownerOf(_params.optionId), _params.optionId, optionIds, _params.to);
    }

    function updateIVSetter(address _setter, bool _status) external onlyOwner {
        ivSetter[_setter] = _status;
        emit LogIVSetterUpdate(_setter, _status);
    }

    function updateIVs(uint256[] calldata _ttls, uint256[] calldata _ttlIV) external {
        if (!ivSetter[msg.sender]) revert DopexV2OptionMarket__NotIVSetter();
        for (uint256 i; i < _ttls.length; i++) {
            ttlToVol[_ttls[i]] = _ttlIV[i];
        }
        emit LogIVUpdate(_ttls, _ttlIV);
    }
}
