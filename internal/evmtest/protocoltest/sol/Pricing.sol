// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IHook} from "./Interfaces.sol";

/// @notice stryke-xyz/clamm's IOptionPricingV2: what an option market asks
/// for the price of one call-asset unit of an option, in put-asset base
/// units (the unit of strike and lastPrice).
interface IOptionPricingV2 {
    function getOptionPrice(bool isPut, uint256 expiry, uint256 strike, uint256 lastPrice)
        external
        view
        returns (uint256);
}

/// @notice The fee strategy an option market asks for its protocol fee
/// (DopexV2ClammFeeStrategyV2's onFeeReqReceive).
interface IFeeStrategy {
    function onFeeReqReceive(address optionMarket, uint256 amount, uint256 premium) external view returns (uint256);
}

/// @notice What the test pricings share: IOptionPricingV2's
/// getOptionPrice (by expiry) and getOptionPriceViaTTL (by ttl), both
/// pricing at the ttl through the pricing's own _price.
abstract contract TestPricingBase {
    function getOptionPrice(bool isPut, uint256 expiry, uint256 strike, uint256 lastPrice)
        external
        view
        returns (uint256)
    {
        return _price(isPut, expiry - block.timestamp, strike, lastPrice);
    }

    function getOptionPriceViaTTL(bool isPut, uint256 ttl, uint256 strike, uint256 lastPrice)
        external
        view
        returns (uint256)
    {
        return _price(isPut, ttl, strike, lastPrice);
    }

    function _price(bool isPut, uint256 ttl, uint256 strike, uint256 lastPrice) internal view virtual returns (uint256);
}

/// @notice Test stand-in for the OptionPricingLinearV2_1 family, with what
/// a gateway can observe of it:
///   - getOptionPrice(isPut, expiry, strike, lastPrice), reading the IV of
///     ttl = expiry - block.timestamp, and getOptionPriceViaTTL by ttl;
///   - an IV table per ttl (ttlToVol, updateIVs, the UpdatedIVs event); an
///     unset ttl reverts with no data, as the real contracts' bare revert(),
///     or prices 0 when zeroWhenUnset (the market then reverts IVNotSet);
///   - getVolatility(strike, lastPrice, volatility, ttl): the IV a strike
///     is priced at, skewed by the distance to the price and discounted by
///     the xSYK balance of tx.origin, tier by tier, so a quote is per user
///     and must be an eth_call from that user;
///   - a floor of minOptionPricePercentage (1e10 = 100%) of lastPrice.
/// The price model is not Black-Scholes (the real one's ABDK quad maths is
/// not needed to test a gateway that reads prices, never computes them):
/// intrinsic value at lastPrice plus a time value of 0.4 * lastPrice * iv *
/// sqrt(ttl / 365 days), shrinking with the strike's distance from the
/// price. It depends on strike, price, ttl and IV, as the real one does.
contract TestOptionPricing is Ownable, TestPricingBase {
    uint256 public constant VOLATILITY_PRECISION = 1e4;

    uint256 public minOptionPricePercentage;
    address public xSyk;
    bool public zeroWhenUnset;

    mapping(uint256 => uint256) public ttlToVol; // percent: 50 is 50%
    /// @notice Extra IV per 1% of distance between strike and price, in 1e4 (1e4: +1% of the IV).
    mapping(uint256 => uint256) public skewPerPercent;
    mapping(address => bool) public ivSetter;

    uint256[] public xSykBalances;
    uint256[] public discounts; // 1e4 precision: 1000 takes 10% off the IV

    error NotIVSetter();

    event UpdatedIVs(address sender, uint256[] ttls, uint256[] ttlIVs);

    constructor(uint256 _minOptionPricePercentage, address _xSyk) {
        minOptionPricePercentage = _minOptionPricePercentage;
        xSyk = _xSyk;
        ivSetter[msg.sender] = true;
    }

    function updateIVs(uint256[] calldata _ttls, uint256[] calldata _ttlIVs) external {
        if (!ivSetter[msg.sender]) revert NotIVSetter();
        for (uint256 i; i < _ttls.length; i++) {
            ttlToVol[_ttls[i]] = _ttlIVs[i];
        }
        emit UpdatedIVs(msg.sender, _ttls, _ttlIVs);
    }

    function updateSkew(uint256 _ttl, uint256 _skewPerPercent) external onlyOwner {
        skewPerPercent[_ttl] = _skewPerPercent;
    }

    function setZeroWhenUnset(bool _zero) external onlyOwner {
        zeroWhenUnset = _zero;
    }

    function setXSykBalancesAndDiscounts(uint256[] calldata _balances, uint256[] calldata _discounts) external onlyOwner {
        require(_balances.length == _discounts.length);
        xSykBalances = _balances;
        discounts = _discounts;
    }

    function getVolatility(uint256 strike, uint256 lastPrice, uint256 volatility, uint256 ttl)
        public
        view
        returns (uint256)
    {
        uint256 dist = strike > lastPrice ? strike - lastPrice : lastPrice - strike;
        // the distance in percent of the price times the skew per percent, in 1e4
        uint256 bump = (dist * 100 * skewPerPercent[ttl]) / lastPrice;
        volatility = (volatility * (VOLATILITY_PRECISION + bump)) / VOLATILITY_PRECISION;
        uint256 off;
        uint256 held = xSykBalances.length == 0 ? 0 : IERC20(xSyk).balanceOf(tx.origin);
        for (uint256 i; i < xSykBalances.length && held >= xSykBalances[i]; i++) {
            off = discounts[i];
        }
        return volatility * (VOLATILITY_PRECISION - off) / VOLATILITY_PRECISION;
    }

    function _price(bool isPut, uint256 ttl, uint256 strike, uint256 lastPrice) internal view override returns (uint256) {
        uint256 iv = ttlToVol[ttl];
        if (iv == 0) {
            if (zeroWhenUnset) return 0;
            revert();
        }
        iv = getVolatility(strike, lastPrice, iv, ttl);
        return testOptionPrice(isPut, ttl, strike, lastPrice, iv, minOptionPricePercentage);
    }
}

/// @dev The test pricings' price model (not Black-Scholes): intrinsic value
/// at lastPrice plus a time value of 0.4 * lastPrice * iv * sqrt(ttl / 365
/// days), shrinking with the strike's distance from the price, floored at
/// minPct (1e10 = 100%) of lastPrice.
function testOptionPrice(bool isPut, uint256 ttl, uint256 strike, uint256 lastPrice, uint256 iv, uint256 minPct)
    pure
    returns (uint256)
{
    uint256 sqrtYears = Math.sqrt((ttl * 1e18) / 365 days); // 1e9 = one year
    uint256 atm = (lastPrice * iv * sqrtYears * 4) / (10 * 100 * 1e9);
    uint256 dist = strike > lastPrice ? strike - lastPrice : lastPrice - strike;
    uint256 timeValue = (atm * lastPrice) / (lastPrice + 4 * dist);
    uint256 intrinsic;
    if (isPut && strike > lastPrice) intrinsic = strike - lastPrice;
    if (!isPut && lastPrice > strike) intrinsic = lastPrice - strike;
    uint256 price = intrinsic + timeValue;
    uint256 floor = (lastPrice * minPct) / 1e10;
    return price < floor ? floor : price;
}

/// @notice Test stand-in for DopexV2ClammFeeStrategyV2: the fee is
/// feePercentages[market] * premium / (1e4 * 100) (340000 is 34%), for
/// registered markets only.
contract TestFeeStrategy is IFeeStrategy, Ownable {
    mapping(address => bool) public registeredOptionMarkets;
    mapping(address => uint256) public feePercentages;

    error OptionMarketNotRegistered(address market);

    function registerOptionMarket(address _market, uint256 _feePercentage) external onlyOwner {
        require(_feePercentage < 1e6);
        registeredOptionMarkets[_market] = true;
        feePercentages[_market] = _feePercentage;
    }

    function onFeeReqReceive(address _market, uint256, uint256 _premium) external view returns (uint256) {
        if (!registeredOptionMarkets[_market]) revert OptionMarketNotRegistered(_market);
        return (feePercentages[_market] * _premium) / (1e4 * 100);
    }
}

/// @notice As stryke-xyz/clamm's WeekendHook: a range under it can be used
/// by whitelisted apps only, and not while block.timestamp falls on a UTC
/// Saturday or Sunday; a refusal is a bare revert.
contract TestWeekendHook is IHook, Ownable {
    mapping(address => bool) public whitelistedApps;

    function onPositionUse(bytes calldata _data) external view {
        address app = abi.decode(_data[:32], (address));
        if (!whitelistedApps[app]) revert();
        uint256 weekday = (block.timestamp / 1 days + 4) % 7; // 1970-01-01 was a Thursday; 0 is Sunday
        if (weekday == 0 || weekday == 6) revert();
    }

    function onPositionUnUse(bytes calldata) external {}

    function updateWhitelistedAppsStatus(address app, bool status) external onlyOwner {
        whitelistedApps[app] = status;
    }
}
