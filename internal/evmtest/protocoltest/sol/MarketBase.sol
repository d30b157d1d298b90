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
import {IPositionManager, IPool} from "./Interfaces.sol";
import {IOptionPricingV2, IFeeStrategy} from "./Pricing.sol";

/// @notice What the V1 and V2 market stand-ins share with each other and
/// with stryke-xyz/clamm's DopexV2OptionMarket(V2): the immutables and
/// getters, opData, exercise delegates, the price of the call asset from a
/// sqrt price (_getPrice), the premium formula (_getPremiumAmount) and the
/// custom errors.
///
/// Pricing: once updatePricing names an option pricing contract, the option
/// price per call-asset unit is its getOptionPrice(isPut, expiry, strike,
/// lastPrice), as the real V2 market asks it, and a fee strategy set there
/// gives the protocol fee (getFee = dpFee.onFeeReqReceive(market, amount,
/// premium)). Until then (the V1 market always) a deterministic price:
/// premiumRate * spot / 1e6 (1% of spot unless updatePremiumRate), whatever
/// the strike and expiry, and a fee of feePercentage * premium / 1e6 (as
/// DopexV2ClammFeeStrategyV2 with its 1e4 * 100 precision). Either way the
/// fee goes to feeTo, and only when feeTo is set, as in the real market.
abstract contract MarketBase is ReentrancyGuard, Multicall, Ownable, ERC721 {
    struct OptionData {
        uint256 opTickArrayLen;
        int24 tickLower;
        int24 tickUpper;
        uint256 expiry;
        bool isCall;
    }

    event LogExerciseOption(address user, uint256 tokenId, uint256 totalProfit, uint256 totalAssetRelocked);
    event LogSettleOption(address user, uint256 tokenId);
    event LogSplitOption(address user, uint256 tokenId, uint256 newTokenId, address to);
    event LogUpdateExerciseDelegate(address owner, address delegate, bool status);
    event LogOptionsMarketInitialized(
        address primePool, address optionPricing, address dpFee, address callAsset, address putAsset
    );
    event LogUpdateAddress(address tokeURIFetcher, address dpFee, address optionPricing);

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
    address public tokenURIFetcher;
    uint256 public feePercentage;
    uint256 public premiumRate = 10_000;
    IOptionPricingV2 public optionPricing;
    IFeeStrategy public dpFee;

    mapping(uint256 => OptionData) public opData;
    mapping(address => mapping(address => bool)) public exerciseDelegator;
    mapping(address => bool) public approvedPools;
    mapping(address => bool) public settlers;

    uint256 public optionIds;

    constructor(
        address _pm,
        address _callAsset,
        address _putAsset,
        address _primePool,
        string memory name_,
        string memory symbol_
    ) ERC721(name_, symbol_) {
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

    /// @dev Checks the caller may exercise `id` and the option is live;
    /// returns its number of legs, whether the asset used is the prime pool's token0,
    /// and the two assets.
    function _exerciseStart(uint256 id, uint256 legs)
        internal
        view
        returns (uint256 legCount, bool isAmount0, IERC20 assetToUse, IERC20 assetToGet)
    {
        address owner_ = ownerOf(id);
        if (owner_ != msg.sender && !exerciseDelegator[owner_][msg.sender]) {
            revert DopexV2OptionMarket__NotOwnerOrDelegator();
        }
        OptionData storage oData = opData[id];
        legCount = oData.opTickArrayLen;
        if (legCount != legs) revert DopexV2OptionMarket__ArrayLenMismatch();
        if (oData.expiry < block.timestamp) revert DopexV2OptionMarket__OptionExpired();
        isAmount0 = oData.isCall ? primePool.token0() == callAsset : primePool.token0() == putAsset;
        assetToUse = IERC20(oData.isCall ? callAsset : putAsset);
        assetToGet = IERC20(oData.isCall ? putAsset : callAsset);
    }

    /// @dev (amount of the used asset L stands for over the range, amount of
    /// the other asset the re-mint needs), with LiquidityAmounts rounding.
    function _legAmounts(int24 tickLower, int24 tickUpper, uint256 liq, bool isAmount0)
        internal
        pure
        returns (uint256, uint256)
    {
        uint160 sa = ClammMath.sqrtRatioAtTick(tickLower);
        uint160 sb = ClammMath.sqrtRatioAtTick(tickUpper);
        uint256 a0 = ClammMath.amount0ForLiquidity(sa, sb, uint128(liq));
        uint256 a1 = ClammMath.amount1ForLiquidity(sa, sb, uint128(liq));
        return isAmount0 ? (a0, a1) : (a1, a0);
    }

    /// @dev The premium for `total` of the asset used and the protocol fee
    /// on it, both pulled from the buyer (fee to feeTo, premium to the
    /// market, which lets the position manager take it for the donations).
    function _charge(bool isCall, int24 strikeTick, uint256 total, uint256 maxCost, uint256 ttl)
        internal
        returns (uint256 premiumAmount, uint256 protocolFees)
    {
        uint256 strike = getPricePerCallAssetViaTick(primePool, strikeTick);
        premiumAmount = _getPremiumAmount(
            !isCall,
            block.timestamp + ttl,
            strike,
            getCurrentPricePerCallAsset(primePool),
            isCall ? total : (total * (10 ** putAssetDecimals)) / strike
        );
        if (premiumAmount == 0) revert DopexV2OptionMarket__IVNotSet();
        address assetToUse = isCall ? callAsset : putAsset;
        if (feeTo != address(0)) {
            protocolFees = getFee(total, premiumAmount);
            IERC20(assetToUse).transferFrom(msg.sender, feeTo, protocolFees);
        }
        if (premiumAmount + protocolFees > maxCost) revert DopexV2OptionMarket__MaxCostAllowanceExceeded();
        IERC20(assetToUse).transferFrom(msg.sender, address(this), premiumAmount);
        IERC20(assetToUse).approve(address(positionManager), premiumAmount);
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

    function _sqrtPrice(IPool pool) internal view returns (uint160 p) {
        (p,,,,,,) = pool.slot0();
    }

    /// @dev The real markets' formula around the deterministic option price.
    function _getPremiumAmount(bool isPut, uint256 expiry, uint256 strike, uint256 lastPrice, uint256 amount)
        internal
        view
        returns (uint256)
    {
        uint256 optionPrice = address(optionPricing) == address(0)
            ? (lastPrice * premiumRate) / 1e6
            : optionPricing.getOptionPrice(isPut, expiry, strike, lastPrice);
        uint256 premiumInQuote = (amount * optionPrice) / (isPut ? 10 ** putAssetDecimals : 10 ** callAssetDecimals);
        if (isPut) return premiumInQuote;
        return (premiumInQuote * (10 ** callAssetDecimals)) / lastPrice;
    }

    /// @dev Price of one call-asset unit in put-asset base units, as the real _getPrice.
    function _getPrice(IPool _pool, uint160 sqrtPriceX96) internal view returns (uint256 price) {
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

    function getFee(uint256 amount, uint256 premium) public view returns (uint256) {
        if (address(dpFee) != address(0)) return dpFee.onFeeReqReceive(address(this), amount, premium);
        return (feePercentage * premium) / 1e6;
    }

    // ---- admin (the test protocol's own setters) ----

    function updateFees(address _feeTo, uint256 _feePercentage) external onlyOwner {
        require(_feePercentage < 1e6);
        feeTo = _feeTo;
        feePercentage = _feePercentage;
    }

    /// @notice The pricing and fee contracts (the real market's updateAddress
    /// sets them with feeTo and the rest); zero addresses restore the
    /// deterministic price and the feePercentage fee.
    function updatePricing(address _optionPricing, address _dpFee) external onlyOwner {
        optionPricing = IOptionPricingV2(_optionPricing);
        dpFee = IFeeStrategy(_dpFee);
    }

    function updatePremiumRate(uint256 _premiumRate) external onlyOwner {
        premiumRate = _premiumRate;
    }

    /// @notice The real markets' one admin setter, in their order: every
    /// field is set (approvedPools[_pool] among them), then the pool must
    /// hold both assets (InvalidPool reverts it all), then LogUpdateAddress,
    /// which names neither the pool nor the settler. It is the only way a
    /// pool gets approved, as on chain, so an indexer finds approvals only
    /// as it would there: by reading approvedPools.
    function updateAddress(
        address _feeTo,
        address _tokeURIFetcher,
        address _dpFee,
        address _optionPricing,
        address _settler,
        bool _statusSettler,
        address _pool,
        bool _statusPools
    ) external onlyOwner {
        feeTo = _feeTo;
        tokenURIFetcher = _tokeURIFetcher;
        dpFee = IFeeStrategy(_dpFee);
        optionPricing = IOptionPricingV2(_optionPricing);
        settlers[_settler] = _statusSettler;
        approvedPools[_pool] = _statusPools;
        _checkPool(_pool);
        emit LogUpdateAddress(_tokeURIFetcher, _dpFee, _optionPricing);
    }

    function updateSettler(address _settler, bool _status) external onlyOwner {
        settlers[_settler] = _status;
    }
}
