// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/security/Pausable.sol";
import {ClammMath} from "./ClammMath.sol";
import {IHook, IPool, ISwapRouter} from "./Interfaces.sol";
import {ERC6909Shares, PoolLiquidity} from "./PoolLiquidity.sol";

/// @notice What the test stand-ins for UniswapV3SingleTickLiquidityHandlerV2
/// and …V3 (stryke-xyz/clamm) share: the same ABI, getters (tokenIds
/// returns TokenIdInfo in the real field order), events and accounting,
/// holding liquidity in a real Uniswap V3 pool (pool.mint with the mint
/// callback, burn, collect), so using and re-adding liquidity moves real
/// prices. The rules that decide money follow the real source: a range is
/// minted only out of range; use needs totalLiquidity - liquidityUsed >= L;
/// unuse re-mints the liquidity one-sided at the pool's current price and,
/// when the re-minted L exceeds liquidityUsed, adds the excess to
/// totalLiquidity and zeroes liquidityUsed; fees are compounded on mint
/// when the real condition holds; reserving burns shares and emits
/// LogBurnedPosition. What the two generations do differently is left to
/// them: the custom errors (named after each contract), who may reserve and
/// for whom (_reserve, _withdrawReserved take the account), the pools a
/// mint accepts (_checkPool) and who pays a compounded fee's re-mint
/// (_addCompounded).
abstract contract SingleTickHandler is PoolLiquidity, ERC6909Shares, Pausable, AccessControl {
    using SafeERC20 for IERC20;

    struct TokenIdInfo {
        uint128 totalLiquidity;
        uint128 totalSupply;
        uint128 liquidityUsed;
        uint256 feeGrowthInside0LastX128;
        uint256 feeGrowthInside1LastX128;
        uint128 tokensOwed0;
        uint128 tokensOwed1;
        uint64 lastDonation;
        uint128 donatedLiquidity;
        address token0;
        address token1;
        uint24 fee;
        uint128 reservedLiquidity;
    }

    struct MintPositionParams {
        IPool pool;
        address hook;
        int24 tickLower;
        int24 tickUpper;
        uint128 liquidity;
    }

    struct BurnPositionParams {
        IPool pool;
        address hook;
        int24 tickLower;
        int24 tickUpper;
        uint128 shares;
    }

    struct ReserveLiquidityData {
        uint128 liquidity;
        uint64 lastReserve;
    }

    struct UsePositionParams {
        IPool pool;
        address hook;
        int24 tickLower;
        int24 tickUpper;
        uint128 liquidityToUse;
    }

    event LogMintedPosition(
        uint256 tokenId, uint128 liquidityMinted, address pool, address hook, address user, int24 tickLower, int24 tickUpper
    );
    event LogBurnedPosition(
        uint256 tokenId, uint128 liquidityBurned, address pool, address hook, address user, int24 tickLower, int24 tickUpper
    );
    event LogFeeCompound(address handler, IPool pool, uint256 tokenId, int24 tickLower, int24 tickUpper, uint128 liquidity);
    event LogUsePosition(uint256 tokenId, uint128 liquidityUsed);
    event LogUnusePosition(uint256 tokenId, uint128 liquidityUnused);
    event LogDonation(uint256 tokenId, uint128 liquidityDonated);
    event LogUpdateWhitelistedApp(address _app, bool _status);
    event LogUpdatedLockBlockAndReserveCooldownDuration(uint64 _newLockedBlockDuration, uint64 _newReserveCooldown);
    event LogReservedLiquidity(uint256 tokenId, uint128 liquidityReserved, address user);
    event LogWithdrawReservedLiquidity(uint256 tokenId, uint128 liquidityWithdrawn, address user);

    /// @dev The refusals both generations have, each reverted with the
    /// generation's own custom error by _fail.
    enum Fail {
        NotWhitelisted,
        InRangeLP,
        InsufficientLiquidity,
        BeforeReserveCooldown
    }

    mapping(uint256 => TokenIdInfo) public tokenIds;
    mapping(address => bool) public whitelistedApps;
    mapping(uint256 => mapping(address => ReserveLiquidityData)) public reservedLiquidityPerUser;
    ISwapRouter public immutable swapRouter;

    uint64 public reserveCooldown = 6 hours;
    uint64 public lockedBlockDuration = 100;
    uint64 public newLockedBlockDuration;

    bytes32 public constant PAUSER_ROLE = keccak256("P");

    constructor(address _factory, address _swapRouter) PoolLiquidity(_factory) {
        swapRouter = ISwapRouter(_swapRouter);
        _grantRole(DEFAULT_ADMIN_ROLE, msg.sender);
        _grantRole(PAUSER_ROLE, msg.sender);
    }

    function _id(IPool pool, address hook, int24 tl, int24 tu) private view returns (uint256) {
        return uint256(keccak256(abi.encode(address(this), pool, hook, tl, tu)));
    }

    function _onlyWhitelisted() internal view {
        if (!whitelistedApps[msg.sender]) _fail(Fail.NotWhitelisted);
    }

    /// @dev Reverts with the generation's custom error for f.
    function _fail(Fail f) internal pure virtual;

    /// @dev Refuses a mint into a pool the generation does not take (V3:
    /// whitelistedPools); called right after the payload is decoded.
    function _checkPool(IPool pool) internal view virtual;

    /// @dev Re-adds a compounded fee's tokens, which the handler holds, as
    /// liquidity; the generation decides who the pool's mint callback
    /// charges (addLiquidity's caller pays).
    function _addCompounded(AddLiquidityParams memory a) internal virtual returns (uint128);

    function _add(TokenIdInfo storage tki, int24 tl, int24 tu, uint256 a0, uint256 a1) private returns (uint128 l) {
        (l,,,) = addLiquidity(AddLiquidityParams(tki.token0, tki.token1, tki.fee, address(this), tl, tu, a0, a1, a0, a1));
    }

    // ---- positions ----

    function mintPositionHandler(address context, bytes calldata _data)
        external
        whenNotPaused
        returns (uint256 sharesMinted)
    {
        _onlyWhitelisted();
        MintPositionParams memory p = abi.decode(_data, (MintPositionParams));
        _checkPool(p.pool);
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        if (tki.token0 == address(0)) {
            tki.token0 = p.pool.token0();
            tki.token1 = p.pool.token1();
            tki.fee = p.pool.fee();
        }
        (uint256 a0, uint256 a1) = ClammMath.amountsForLiquidity(
            _price(p.pool), ClammMath.sqrtRatioAtTick(p.tickLower), ClammMath.sqrtRatioAtTick(p.tickUpper), p.liquidity
        );
        if (a0 > 0 && a1 > 0) _fail(Fail.InRangeLP);
        uint128 liquidity = _add(tki, p.tickLower, p.tickUpper, a0, a1);
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);

        if (tki.totalSupply > 0) {
            _compound(tki, p, tokenId, a0 > 0);
            uint128 shares = _convertToShares(liquidity, tokenId);
            tki.totalLiquidity += liquidity;
            tki.totalSupply += shares;
            sharesMinted = shares;
        } else {
            tki.totalLiquidity += liquidity;
            tki.totalSupply += liquidity;
            sharesMinted = liquidity;
        }
        _mint(context, tokenId, sharesMinted);
        emit LogMintedPosition(tokenId, liquidity, address(p.pool), p.hook, context, p.tickLower, p.tickUpper);
    }

    /// @dev The real compounding rule: owed fees above 1,000 units of either
    /// token, and the amounts for 2 units of liquidity above the owed fees
    /// of either token; then collect, swap the other token through the
    /// SwapRouter into the range's token, re-add as liquidity.
    function _compound(TokenIdInfo storage tki, MintPositionParams memory p, uint256 tokenId, bool isAmount0) private {
        if (tki.tokensOwed0 <= 1_000 && tki.tokensOwed1 <= 1_000) return;
        uint160 sa = ClammMath.sqrtRatioAtTick(p.tickLower);
        uint160 sb = ClammMath.sqrtRatioAtTick(p.tickUpper);
        if (
            ClammMath.amount0ForLiquidity(sa, sb, 2) <= tki.tokensOwed0
                && ClammMath.amount1ForLiquidity(sa, sb, 2) <= tki.tokensOwed1
        ) return;
        (uint256 c0, uint256 c1) = p.pool.collect(address(this), p.tickLower, p.tickUpper, tki.tokensOwed0, tki.tokensOwed1);
        (tki.tokensOwed0, tki.tokensOwed1) = (0, 0);
        uint256 out;
        if (isAmount0 ? c1 > 0 : c0 > 0) {
            address tin = isAmount0 ? tki.token1 : tki.token0;
            IERC20(tin).safeIncreaseAllowance(address(swapRouter), isAmount0 ? c1 : c0);
            out = swapRouter.exactInputSingle(
                ISwapRouter.ExactInputSingleParams({
                    tokenIn: tin,
                    tokenOut: isAmount0 ? tki.token0 : tki.token1,
                    fee: tki.fee,
                    recipient: address(this),
                    deadline: block.timestamp,
                    amountIn: isAmount0 ? c1 : c0,
                    amountOutMinimum: 0,
                    sqrtPriceLimitX96: 0
                })
            );
        }
        uint256 d0 = c0 + (isAmount0 ? out : 0);
        uint256 d1 = c1 + (isAmount0 ? 0 : out);
        uint128 lf = _addCompounded(
            AddLiquidityParams(tki.token0, tki.token1, tki.fee, address(this), p.tickLower, p.tickUpper, d0, d1, d0, d1)
        );
        tki.totalLiquidity += lf;
        emit LogFeeCompound(address(this), p.pool, tokenId, p.tickLower, p.tickUpper, lf);
    }

    function burnPositionHandler(address context, bytes calldata _data) external whenNotPaused returns (uint256) {
        _onlyWhitelisted();
        BurnPositionParams memory p = abi.decode(_data, (BurnPositionParams));
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        uint128 liquidityToBurn = _convertToAssets(p.shares, tokenId);
        if (tki.totalLiquidity - tki.liquidityUsed < liquidityToBurn) {
            _fail(Fail.InsufficientLiquidity);
        }
        _burnAndCollect(tki, p, liquidityToBurn, context);
        tki.totalLiquidity -= liquidityToBurn;
        tki.totalSupply -= p.shares;
        _burn(context, tokenId, p.shares);
        emit LogBurnedPosition(tokenId, liquidityToBurn, address(p.pool), p.hook, context, p.tickLower, p.tickUpper);
        return p.shares;
    }

    /// @dev Burns the liquidity and collects it with its share of the owed fees to `to`.
    function _burnAndCollect(TokenIdInfo storage tki, BurnPositionParams memory p, uint128 liquidityToBurn, address to)
        private
    {
        (uint256 a0, uint256 a1) = p.pool.burn(p.tickLower, p.tickUpper, liquidityToBurn);
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);
        (uint128 f0, uint128 f1) = _feesTokenOwed(p.tickLower, p.tickUpper, liquidityToBurn, tki);
        tki.tokensOwed0 -= f0;
        tki.tokensOwed1 -= f1;
        p.pool.collect(to, p.tickLower, p.tickUpper, uint128(a0 + f0), uint128(a1 + f1));
    }

    /// @dev Burns `context`'s shares into reserved liquidity that stays in
    /// the pool (withdrawable after reserveCooldown), paying `context` the
    /// burnt liquidity's share of the owed fees; emits LogBurnedPosition
    /// then LogReservedLiquidity, as the real ones. The record keeps one
    /// lastReserve per (range, account): every reservation restarts the
    /// cooldown of all the account's reserved liquidity in the range.
    function _reserve(address context, bytes calldata _data) internal returns (uint256) {
        BurnPositionParams memory p = abi.decode(_data, (BurnPositionParams));
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        uint128 liquidityToBurn = _convertToAssets(p.shares, tokenId);
        p.pool.burn(p.tickLower, p.tickUpper, 0);
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);
        (uint128 f0, uint128 f1) = _feesTokenOwed(p.tickLower, p.tickUpper, liquidityToBurn, tki);
        tki.tokensOwed0 -= f0;
        tki.tokensOwed1 -= f1;
        p.pool.collect(context, p.tickLower, p.tickUpper, f0, f1);
        ReserveLiquidityData storage rld = reservedLiquidityPerUser[tokenId][context];
        rld.liquidity += liquidityToBurn;
        rld.lastReserve = uint64(block.timestamp);
        tki.totalLiquidity -= liquidityToBurn;
        tki.totalSupply -= p.shares;
        tki.reservedLiquidity += liquidityToBurn;
        _burn(context, tokenId, p.shares);
        emit LogBurnedPosition(tokenId, liquidityToBurn, address(p.pool), p.hook, context, p.tickLower, p.tickUpper);
        emit LogReservedLiquidity(tokenId, liquidityToBurn, context);
        return p.shares;
    }

    function _feesTokenOwed(int24 tl, int24 tu, uint128 liquidityToBurn, TokenIdInfo storage tki)
        private
        view
        returns (uint128 f0, uint128 f1)
    {
        uint160 sa = ClammMath.sqrtRatioAtTick(tl);
        uint160 sb = ClammMath.sqrtRatioAtTick(tu);
        uint256 total0 = ClammMath.amount0ForLiquidity(sa, sb, tki.totalLiquidity);
        uint256 total1 = ClammMath.amount1ForLiquidity(sa, sb, tki.totalLiquidity);
        if (total0 > 0) f0 = uint128((tki.tokensOwed0 * ClammMath.amount0ForLiquidity(sa, sb, liquidityToBurn)) / total0);
        if (total1 > 0) f1 = uint128((tki.tokensOwed1 * ClammMath.amount1ForLiquidity(sa, sb, liquidityToBurn)) / total1);
    }

    /// @dev Withdraws `context`'s reserved liquidity to it (the `shares`
    /// field is liquidity here, as in the real ones), once its cooldown has
    /// passed and the pool position holds that much unused liquidity.
    function _withdrawReserved(address context, bytes calldata _data) internal {
        BurnPositionParams memory p = abi.decode(_data, (BurnPositionParams));
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        ReserveLiquidityData storage rld = reservedLiquidityPerUser[tokenId][context];
        if (rld.lastReserve + reserveCooldown > block.timestamp) {
            _fail(Fail.BeforeReserveCooldown);
        }
        if ((tki.totalLiquidity + tki.reservedLiquidity) - tki.liquidityUsed < p.shares) {
            _fail(Fail.InsufficientLiquidity);
        }
        (uint256 a0, uint256 a1) = p.pool.burn(p.tickLower, p.tickUpper, p.shares);
        p.pool.collect(context, p.tickLower, p.tickUpper, uint128(a0), uint128(a1));
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);
        tki.reservedLiquidity -= p.shares;
        rld.liquidity -= p.shares;
        emit LogWithdrawReservedLiquidity(tokenId, p.shares, context);
    }

    function usePositionHandler(bytes calldata _data)
        external
        whenNotPaused
        returns (address[] memory tokens, uint256[] memory amounts, uint256)
    {
        _onlyWhitelisted();
        (UsePositionParams memory p, bytes memory hookData) = abi.decode(_data, (UsePositionParams, bytes));
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        if (p.hook != address(0)) IHook(p.hook).onPositionUse(hookData);
        if (tki.totalLiquidity - tki.liquidityUsed < p.liquidityToUse) {
            _fail(Fail.InsufficientLiquidity);
        }
        (uint256 a0, uint256 a1) = p.pool.burn(p.tickLower, p.tickUpper, p.liquidityToUse);
        p.pool.collect(msg.sender, p.tickLower, p.tickUpper, uint128(a0), uint128(a1));
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);
        tki.liquidityUsed += p.liquidityToUse;
        tokens = new address[](2);
        (tokens[0], tokens[1]) = (tki.token0, tki.token1);
        amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (a0, a1);
        emit LogUsePosition(tokenId, p.liquidityToUse);
        return (tokens, amounts, p.liquidityToUse);
    }

    /// @notice Re-adds used liquidity at the pool's current price (the caller,
    /// through the position manager, pays whatever that price asks for; a
    /// price inside the range asks for both tokens). The re-minted L first
    /// repays liquidityUsed; any excess becomes new totalLiquidity.
    function unusePositionHandler(bytes calldata _data) external whenNotPaused returns (uint256[] memory, uint256) {
        _onlyWhitelisted();
        (UsePositionParams memory p, bytes memory hookData) = abi.decode(_data, (UsePositionParams, bytes));
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        if (p.hook != address(0)) IHook(p.hook).onPositionUnUse(hookData);
        (uint256 a0, uint256 a1) = ClammMath.amountsForLiquidity(
            _price(p.pool), ClammMath.sqrtRatioAtTick(p.tickLower), ClammMath.sqrtRatioAtTick(p.tickUpper), p.liquidityToUse
        );
        uint128 liquidity = _add(tki, p.tickLower, p.tickUpper, a0, a1);
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);
        if (tki.liquidityUsed >= liquidity) {
            tki.liquidityUsed -= liquidity;
        } else {
            tki.totalLiquidity += liquidity - tki.liquidityUsed;
            tki.liquidityUsed = 0;
        }
        uint256[] memory amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (a0, a1);
        emit LogUnusePosition(tokenId, liquidity);
        return (amounts, uint256(liquidity));
    }

    function donateToPosition(bytes calldata _data) external whenNotPaused returns (uint256[] memory, uint256) {
        _onlyWhitelisted();
        MintPositionParams memory p = abi.decode(_data, (MintPositionParams));
        uint256 tokenId = _id(p.pool, p.hook, p.tickLower, p.tickUpper);
        TokenIdInfo storage tki = tokenIds[tokenId];
        (uint256 a0, uint256 a1) = ClammMath.amountsForLiquidity(
            _price(p.pool), ClammMath.sqrtRatioAtTick(p.tickLower), ClammMath.sqrtRatioAtTick(p.tickUpper), p.liquidity
        );
        uint128 liquidity = _add(tki, p.tickLower, p.tickUpper, a0, a1);
        _feeCalculation(tki, p.pool, p.tickLower, p.tickUpper);
        tki.totalLiquidity += liquidity;
        tki.donatedLiquidity = _donationLocked(tokenId) + liquidity;
        tki.lastDonation = uint64(block.number);
        if (newLockedBlockDuration != 0) {
            lockedBlockDuration = newLockedBlockDuration;
            newLockedBlockDuration = 0;
        }
        uint256[] memory amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (a0, a1);
        emit LogDonation(tokenId, liquidity);
        return (amounts, liquidity);
    }

    /// @dev Fees owed since the last poke, on totalLiquidity + reserved - used,
    /// from the pool's own fee growth inside the range (wrapping arithmetic).
    function _feeCalculation(TokenIdInfo storage tki, IPool pool, int24 tl, int24 tu) private {
        (, uint256 g0, uint256 g1,,) = pool.positions(keccak256(abi.encodePacked(address(this), tl, tu)));
        unchecked {
            uint256 l = tki.totalLiquidity + tki.reservedLiquidity - tki.liquidityUsed;
            tki.tokensOwed0 += uint128(Math.mulDiv(g0 - tki.feeGrowthInside0LastX128, l, ClammMath.Q128));
            tki.tokensOwed1 += uint128(Math.mulDiv(g1 - tki.feeGrowthInside1LastX128, l, ClammMath.Q128));
            tki.feeGrowthInside0LastX128 = g0;
            tki.feeGrowthInside1LastX128 = g1;
        }
    }

    function getHandlerIdentifier(bytes calldata _data) external view returns (uint256) {
        (IPool pool, address hook, int24 tl, int24 tu) = abi.decode(_data, (IPool, address, int24, int24));
        return _id(pool, hook, tl, tu);
    }

    function tokensToPullForMint(bytes calldata d) external view returns (address[] memory, uint256[] memory) {
        return _tokensToPull(d);
    }

    function tokensToPullForUnUse(bytes calldata d) external view returns (address[] memory, uint256[] memory) {
        return _tokensToPull(d);
    }

    function tokensToPullForDonate(bytes calldata d) external view returns (address[] memory, uint256[] memory) {
        return _tokensToPull(d);
    }

    /// @dev The amounts `liquidity` asks for at the pool's current price
    /// (the first five words of any position payload).
    function _tokensToPull(bytes calldata d) private view returns (address[] memory tokens, uint256[] memory amounts) {
        MintPositionParams memory p = abi.decode(d[:160], (MintPositionParams));
        tokens = new address[](2);
        (tokens[0], tokens[1]) = (p.pool.token0(), p.pool.token1());
        amounts = new uint256[](2);
        (amounts[0], amounts[1]) = ClammMath.amountsForLiquidity(
            _price(p.pool), ClammMath.sqrtRatioAtTick(p.tickLower), ClammMath.sqrtRatioAtTick(p.tickUpper), p.liquidity
        );
    }

    function _donationLocked(uint256 tokenId) private view returns (uint128) {
        TokenIdInfo storage tki = tokenIds[tokenId];
        if (block.number >= tki.lastDonation + lockedBlockDuration) return 0;
        return tki.donatedLiquidity
            - uint128((uint256(tki.donatedLiquidity) * (uint64(block.number) - tki.lastDonation)) / lockedBlockDuration);
    }

    function convertToShares(uint128 assets, uint256 tokenId) external view returns (uint128) {
        return _convertToShares(assets, tokenId);
    }

    function convertToAssets(uint128 shares, uint256 tokenId) external view returns (uint128) {
        return _convertToAssets(shares, tokenId);
    }

    function _convertToShares(uint128 assets, uint256 tokenId) private view returns (uint128) {
        TokenIdInfo storage tki = tokenIds[tokenId];
        return uint128(
            Math.mulDiv(assets, tki.totalSupply, (tki.totalLiquidity + 1) - _donationLocked(tokenId), Math.Rounding.Down)
        );
    }

    function _convertToAssets(uint128 shares, uint256 tokenId) private view returns (uint128) {
        TokenIdInfo storage tki = tokenIds[tokenId];
        return uint128(
            Math.mulDiv(shares, (tki.totalLiquidity + 1) - _donationLocked(tokenId), tki.totalSupply, Math.Rounding.Up)
        );
    }

    function getTokenIdData(uint256 tokenId) external view returns (TokenIdInfo memory) {
        return tokenIds[tokenId];
    }

    function updateWhitelistedApps(address _app, bool _status) external onlyRole(DEFAULT_ADMIN_ROLE) {
        whitelistedApps[_app] = _status;
        emit LogUpdateWhitelistedApp(_app, _status);
    }

    function updateLockedBlockDurationAndReserveCooldown(uint64 _newLockedBlockDuration, uint64 _newReserveCooldown)
        external
        onlyRole(DEFAULT_ADMIN_ROLE)
    {
        newLockedBlockDuration = _newLockedBlockDuration;
        reserveCooldown = _newReserveCooldown;
        emit LogUpdatedLockBlockAndReserveCooldownDuration(_newLockedBlockDuration, _newReserveCooldown);
    }

    function emergencyPause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function emergencyUnpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }
}
