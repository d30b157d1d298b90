// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/security/ReentrancyGuard.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {ClammMath} from "./ClammMath.sol";
import {IHandler, IPositionManager, IPool, ISwapper} from "./Interfaces.sol";

/// @notice Test stand-in for DopexV2OptionMarketV2 (stryke-xyz/clamm): the same
/// ABI (functions, structs, getters, custom errors, events) and the same
/// order of operations where money and events are decided.
///
/// mintOption uses each leg's liquidity through the position manager,
/// prices the option with the real formula (_getPremiumAmount) over a
/// deterministic option price, charges the protocol fee to feeTo (fee =
/// feePercentage * premium / 1e6, as DopexV2ClammFeeStrategyV2), donates
/// the premium back to the legs pro rata and mints the ERC721.
/// The option price (the real market asks an IOptionPricingV2 contract) is
/// premiumRate * spot / 1e6 per call-asset unit, premiumRate 10,000 (1% of
/// spot) unless set: independent of strike and expiry so tests can compute
/// premiums by hand.
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
contract TestOptionMarketV2 is ReentrancyGuard, Multicall, Ownable, ERC721 {
    struct OptionData {
        uint256 opTickArrayLen;
        int24 tickLower;
        int24 tickUpper;
        uint256 expiry;
        bool isCall;
    }

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
    event LogExerciseOption(address user, uint256 tokenId, uint256 totalProfit, uint256 totalAssetRelocked);
    event LogSettleOption(address user, uint256 tokenId);
    event LogSplitOption(address user, uint256 tokenId, uint256 newTokenId, address to);
    event LogUpdateExerciseDelegate(address owner, address delegate, bool status);
    event LogOptionsMarketInitialized(
        address primePool, address optionPricing, address dpFee, address callAsset, address putAsset
    );

    error DopexV2OptionMarket__MaxOptionBuyReached();
    error DopexV2OptionMarket__IVNotSet();
    error DopexV2OptionMarket__NotValidStrikeTick();
    error DopexV2OptionMarket__PoolNotApproved();
    error DopexV2OptionMarket__MaxCostAllowanceExceeded();
    error DopexV2OptionMarket__NotOwnerOrDelegator();
    error DopexV2OptionMarket__EmptyOption();
    error DopexV2OptionMarket__ArrayLenMismatch();
    error DopexV2OptionMarket__OptionExpired();
    error DopexV2OptionMarket__OptionNotExpired();
    error DopexV2OptionMarket__NotEnoughAfterSwap();
    error DopexV2OptionMarket__NotApprovedSettler();
    error DopexV2OptionMarket__NotIVSetter();
    error DopexV2OptionMarket__InvalidPool();

    IPositionManager public immutable positionManager;
    IPool public immutable primePool;
    address public immutable callAsset;
    address public immutable putAsset;
    uint8 public immutable callAssetDecimals;
    uint8 public immutable putAssetDecimals;

    address public feeTo;
    uint256 public feePercentage;
    uint256 public premiumRate = 10_000;

    mapping(uint256 => OptionData) public opData;
    mapping(uint256 => OptionTicks[]) public opTickMap;
    mapping(address => mapping(address => bool)) public exerciseDelegator;
    mapping(address => bool) public approvedPools;
    mapping(address => bool) public settlers;

    uint256 public optionIds;

    constructor(address _pm, address _callAsset, address _putAsset, address _primePool) ERC721("", "") {
        positionManager = IPositionManager(_pm);
        callAsset = _callAsset;
        putAsset = _putAsset;
        primePool = IPool(_primePool);
        _checkPool(_primePool);
        callAssetDecimals = IERC20Metadata(_callAsset).decimals();
        putAssetDecimals = IERC20Metadata(_putAsset).decimals();
        emit LogOptionsMarketInitialized(_primePool, address(0), address(0), _callAsset, _putAsset);
    }

    function _checkPool(address pool) private view {
        address t0 = IPool(pool).token0();
        address t1 = IPool(pool).token1();
        if ((t0 != callAsset && t1 != callAsset) || (t0 != putAsset && t1 != putAsset)) {
            revert DopexV2OptionMarket__InvalidPool();
        }
    }

    function name() public pure override returns (string memory) {
        return "Dopex V2 Option Market V2";
    }

    function symbol() public pure override returns (string memory) {
        return "DPX-V2-OM-V2";
    }

    function mintOption(OptionParams calldata _params) external nonReentrant {
        optionIds += 1;
        if (_params.optionTicks.length > 20) revert DopexV2OptionMarket__MaxOptionBuyReached();
        uint256[] memory perLeg = new uint256[](_params.optionTicks.length);
        address assetToUse = _params.isCall ? callAsset : putAsset;
        (uint256 totalAssetWithdrawn, bool isAmount0) = _useLegs(_params, perLeg, assetToUse);

        uint256 strike = getPricePerCallAssetViaTick(primePool, _params.isCall ? _params.tickUpper : _params.tickLower);
        uint256 premiumAmount = _getPremiumAmount(
            !_params.isCall,
            block.timestamp + _params.ttl,
            strike,
            getCurrentPricePerCallAsset(primePool),
            _params.isCall ? totalAssetWithdrawn : (totalAssetWithdrawn * (10 ** putAssetDecimals)) / strike
        );
        if (premiumAmount == 0) revert DopexV2OptionMarket__IVNotSet();

        uint256 protocolFees;
        if (feeTo != address(0)) {
            protocolFees = getFee(totalAssetWithdrawn, premiumAmount);
            IERC20(assetToUse).transferFrom(msg.sender, feeTo, protocolFees);
        }
        if (premiumAmount + protocolFees > _params.maxCostAllowance) {
            revert DopexV2OptionMarket__MaxCostAllowanceExceeded();
        }
        IERC20(assetToUse).transferFrom(msg.sender, address(this), premiumAmount);
        IERC20(assetToUse).approve(address(positionManager), premiumAmount);
        _donate(_params, perLeg, premiumAmount, totalAssetWithdrawn, isAmount0);

        opData[optionIds] = OptionData({
            opTickArrayLen: _params.optionTicks.length,
            tickLower: _params.tickLower,
            tickUpper: _params.tickUpper,
            expiry: block.timestamp + _params.ttl,
            isCall: _params.isCall
        });
        _safeMint(msg.sender, optionIds);
        emit LogMintOption(msg.sender, optionIds, _params.isCall, premiumAmount, totalAssetWithdrawn, protocolFees);
    }

    function _useLegs(OptionParams calldata _params, uint256[] memory perLeg, address assetToUse)
        private
        returns (uint256 total, bool isAmount0)
    {
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
        address owner_ = ownerOf(_params.optionId);
        if (owner_ != msg.sender && !exerciseDelegator[owner_][msg.sender]) {
            revert DopexV2OptionMarket__NotOwnerOrDelegator();
        }
        OptionData memory oData = opData[_params.optionId];
        if (oData.opTickArrayLen != _params.liquidityToExercise.length) revert DopexV2OptionMarket__ArrayLenMismatch();
        if (oData.expiry < block.timestamp) revert DopexV2OptionMarket__OptionExpired();
        bool isAmount0 = oData.isCall ? primePool.token0() == callAsset : primePool.token0() == putAsset;
        ac.assetToUse = IERC20(oData.isCall ? callAsset : putAsset);
        ac.assetToGet = IERC20(oData.isCall ? putAsset : callAsset);

        for (uint256 i; i < oData.opTickArrayLen; i++) {
            uint256 liq = _params.liquidityToExercise[i];
            if (liq == 0) continue;
            OptionTicks storage t = opTickMap[_params.optionId][i];
            (uint256 amountToSwap, uint256 amountReq) = _legAmounts(t, liq, isAmount0);
            ac.totalAssetRelocked += amountToSwap;
            uint256 prev = ac.assetToGet.balanceOf(address(this));
            ac.assetToUse.transfer(address(_params.swapper[i]), amountToSwap);
            _params.swapper[i].onSwapReceived(address(ac.assetToUse), address(ac.assetToGet), amountToSwap, _params.swapData[i]);
            uint256 current = ac.assetToGet.balanceOf(address(this));
            if (current < prev + amountReq) revert DopexV2OptionMarket__NotEnoughAfterSwap();
            ac.assetToGet.approve(address(positionManager), amountReq);
            positionManager.unusePosition(t._handler, abi.encode(t.pool, t.hook, t.tickLower, t.tickUpper, liq, abi.encode("")));
            t.liquidityToUse -= liq;
            ac.totalProfit += current - (prev + amountReq);
        }
        ac.assetToGet.transfer(msg.sender, ac.totalProfit);
        emit LogExerciseOption(ownerOf(_params.optionId), _params.optionId, ac.totalProfit, ac.totalAssetRelocked);
    }

    /// @dev (amount of the used asset the leg's L stands for, amount of the
    /// other asset the re-mint needs), both over the whole range.
    function _legAmounts(OptionTicks storage t, uint256 liq, bool isAmount0) private view returns (uint256, uint256) {
        uint160 sa = ClammMath.sqrtRatioAtTick(t.tickLower);
        uint160 sb = ClammMath.sqrtRatioAtTick(t.tickUpper);
        uint256 a0 = ClammMath.amount0ForLiquidity(sa, sb, uint128(liq));
        uint256 a1 = ClammMath.amount1ForLiquidity(sa, sb, uint128(liq));
        return isAmount0 ? (a0, a1) : (a1, a0);
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
            positionManager.unusePosition(t._handler, abi.encode(t.pool, t.hook, t.tickLower, t.tickUpper, liq, abi.encode("")));
            t.liquidityToUse -= liq;
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
        (uint256 full, uint256 req) = _legAmounts(t, liq, isAmount0);
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

    function updateExerciseDelegate(address _delegateTo, bool _status) external {
        exerciseDelegator[msg.sender][_delegateTo] = _status;
        emit LogUpdateExerciseDelegate(msg.sender, _delegateTo, _status);
    }

    function getPricePerCallAssetViaTick(IPool _pool, int24 _tick) public view returns (uint256) {
        return _getPrice(_pool, ClammMath.sqrtRatioAtTick(_tick));
    }

    function getCurrentPricePerCallAsset(IPool _pool) public view returns (uint256) {
        return _getPrice(_pool, _sqrtPrice(_pool));
    }

    function getPremiumAmount(bool isPut, uint256 expiry, uint256 strike, uint256 lastPrice, uint256 amount)
        external
        view
        returns (uint256)
    {
        return _getPremiumAmount(isPut, expiry, strike, lastPrice, amount);
    }

    function _sqrtPrice(IPool pool) private view returns (uint160 p) {
        (p,,,,,,) = pool.slot0();
    }

    /// @dev The real market's formula around a deterministic option price.
    function _getPremiumAmount(bool isPut, uint256, uint256, uint256 lastPrice, uint256 amount)
        private
        view
        returns (uint256)
    {
        uint256 optionPrice = (lastPrice * premiumRate) / 1e6;
        uint256 premiumInQuote = (amount * optionPrice) / (isPut ? 10 ** putAssetDecimals : 10 ** callAssetDecimals);
        if (isPut) return premiumInQuote;
        return (premiumInQuote * (10 ** callAssetDecimals)) / lastPrice;
    }

    /// @dev Price of one call-asset unit in put-asset base units, as the real _getPrice.
    function _getPrice(IPool _pool, uint160 sqrtPriceX96) private view returns (uint256 price) {
        bool callIs0 = callAsset == _pool.token0();
        uint256 one = 10 ** callAssetDecimals;
        if (sqrtPriceX96 <= type(uint128).max) {
            uint256 priceX192 = uint256(sqrtPriceX96) * sqrtPriceX96;
            price = callIs0 ? Math.mulDiv(priceX192, one, 1 << 192) : Math.mulDiv(1 << 192, one, priceX192);
        } else {
            uint256 priceX128 = Math.mulDiv(sqrtPriceX96, sqrtPriceX96, 1 << 64);
            price = callIs0 ? Math.mulDiv(priceX128, one, 1 << 128) : Math.mulDiv(1 << 128, one, priceX128);
        }
    }

    function getFee(uint256, uint256 premium) public view returns (uint256) {
        return (feePercentage * premium) / 1e6;
    }

    // ---- admin (the test protocol's own setters) ----

    function updateFees(address _feeTo, uint256 _feePercentage) external onlyOwner {
        require(_feePercentage < 1e6);
        feeTo = _feeTo;
        feePercentage = _feePercentage;
    }

    function updatePremiumRate(uint256 _premiumRate) external onlyOwner {
        premiumRate = _premiumRate;
    }

    function updatePool(address _pool, bool _status) external onlyOwner {
        _checkPool(_pool);
        approvedPools[_pool] = _status;
    }

    function updateSettler(address _settler, bool _status) external onlyOwner {
        settlers[_settler] = _status;
    }
}
