// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/security/Pausable.sol";
import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ClammMath} from "./ClammMath.sol";
import {IPool, ISwapRouter} from "./Interfaces.sol";
import {PoolLiquidity} from "./PoolLiquidity.sol";

/// @notice Test stand-in for UniswapV3SingleTickLiquidityHandler (V1, stryke-xyz/clamm):
/// no hooks and no reservations. Its payloads are (pool, tickLower,
/// tickUpper, amount): four words where V2's have a hook second, so a V2
/// market cannot use it and a V1 market cannot use a V2 handler. tokenId =
/// keccak256(abi.encode(handler, pool, tickLower, tickUpper)); tokenIds
/// returns V1's 12-field TokenIdInfo. Use has no availability check of its
/// own (the pool's burn refuses more than the position holds); unuse has
/// the same re-mint rule as V2. Its shares are OpenZeppelin ERC1155 tokens
/// (TransferSingle events, safe-transfer checks on mint), as the real V1's.
/// As the real one it compounds owed fees on a mint into an existing range
/// (its own condition: any fee owed, then V2's amount check) and pays a
/// burner its share of the owed fees.
contract TestSingleTickHandlerV1 is PoolLiquidity, ERC1155, Pausable, AccessControl {
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
    }

    struct Params {
        IPool pool;
        int24 tickLower;
        int24 tickUpper;
        uint128 amount;
    }

    event LogMintedPosition(uint256 tokenId, uint128 liquidityMinted, address pool, address user, int24 tickLower, int24 tickUpper);
    event LogBurnedPosition(uint256 tokenId, uint128 liquidityBurned, address pool, address user, int24 tickLower, int24 tickUpper);
    event LogFeeCompound(address handler, IPool pool, uint256 tokenId, int24 tickLower, int24 tickUpper, uint128 liquidity);
    event LogUsePosition(uint256 tokenId, uint128 liquidityUsed);
    event LogUnusePosition(uint256 tokenId, uint128 liquidityUnused);
    event LogDonation(uint256 tokenId, uint128 liquidityDonated);
    event LogUpdateWhitelistedApp(address _app, bool _status);
    event LogUpdatedLockedBlockDuration(uint64 _newLockedBlockDuration);

    error UniswapV3SingleTickLiquidityHandler__NotWhitelisted();
    error UniswapV3SingleTickLiquidityHandler__InRangeLP();

    mapping(uint256 => TokenIdInfo) public tokenIds;
    mapping(address => bool) public whitelistedApps;
    ISwapRouter public immutable swapRouter;
    uint64 public lockedBlockDuration = 100;
    uint64 public newLockedBlockDuration;

    bytes32 public constant PAUSER_ROLE = keccak256("P");

    constructor(address _factory, address _swapRouter) PoolLiquidity(_factory) ERC1155("") {
        swapRouter = ISwapRouter(_swapRouter);
        _grantRole(DEFAULT_ADMIN_ROLE, msg.sender);
        _grantRole(PAUSER_ROLE, msg.sender);
    }

    modifier onlyWhitelisted() {
        if (!whitelistedApps[msg.sender]) revert UniswapV3SingleTickLiquidityHandler__NotWhitelisted();
        _;
    }

    function _id(Params memory p) private view returns (uint256) {
        return uint256(keccak256(abi.encode(address(this), p.pool, p.tickLower, p.tickUpper)));
    }

    function _decode(bytes calldata d) private pure returns (Params memory) {
        return abi.decode(d[:128], (Params));
    }

    function _amounts(Params memory p) private view returns (uint256, uint256) {
        return ClammMath.amountsForLiquidity(
            _price(p.pool), ClammMath.sqrtRatioAtTick(p.tickLower), ClammMath.sqrtRatioAtTick(p.tickUpper), p.amount
        );
    }

    function _add(TokenIdInfo storage tki, Params memory p, uint256 a0, uint256 a1) private returns (uint128 l) {
        (l,,,) = addLiquidity(AddLiquidityParams(tki.token0, tki.token1, tki.fee, address(this), p.tickLower, p.tickUpper, a0, a1, a0, a1));
    }

    function mintPositionHandler(address context, bytes calldata data)
        external
        onlyWhitelisted
        whenNotPaused
        returns (uint256 shares)
    {
        Params memory p = _decode(data);
        uint256 tokenId = _id(p);
        TokenIdInfo storage tki = tokenIds[tokenId];
        if (tki.token0 == address(0)) {
            (tki.token0, tki.token1, tki.fee) = (p.pool.token0(), p.pool.token1(), p.pool.fee());
        }
        (uint256 a0, uint256 a1) = _amounts(p);
        if (a0 > 0 && a1 > 0) revert UniswapV3SingleTickLiquidityHandler__InRangeLP();
        uint128 liquidity = _add(tki, p, a0, a1);
        _feeCalculation(tki, p);
        if (tki.totalSupply > 0) {
            _compound(tki, p, tokenId, a0 > 0);
            shares = _convertToShares(liquidity, tokenId);
        } else {
            shares = liquidity;
        }
        tki.totalLiquidity += liquidity;
        tki.totalSupply += uint128(shares);
        _mint(context, tokenId, shares, "");
        emit LogMintedPosition(tokenId, liquidity, address(p.pool), context, p.tickLower, p.tickUpper);
    }

    /// @dev The real V1 rule: owed fees above 0 in either token, and the
    /// amounts for 2 units of liquidity above the owed fees of either
    /// token; then collect, swap the other token into the range's token
    /// through the SwapRouter, re-add as liquidity.
    function _compound(TokenIdInfo storage tki, Params memory p, uint256 tokenId, bool isAmount0) private {
        if (tki.tokensOwed0 == 0 && tki.tokensOwed1 == 0) return;
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
        (uint128 lf,,,) = TestSingleTickHandlerV1(address(this)).addLiquidity(
            AddLiquidityParams(tki.token0, tki.token1, tki.fee, address(this), p.tickLower, p.tickUpper, d0, d1, d0, d1)
        );
        tki.totalLiquidity += lf;
        emit LogFeeCompound(address(this), p.pool, tokenId, p.tickLower, p.tickUpper, lf);
    }

    /// @dev Burns `shares` as the real V1 does: no availability check of its
    /// own (the pool's burn refuses more than the position holds, "LS"), and
    /// the burner's share of the owed fees, pro rata of the amounts its
    /// liquidity stands for over the range, collected with the principal.
    function burnPositionHandler(address context, bytes calldata data) external onlyWhitelisted whenNotPaused returns (uint256) {
        Params memory p = _decode(data);
        uint256 tokenId = _id(p);
        TokenIdInfo storage tki = tokenIds[tokenId];
        uint128 liquidity = _convertToAssets(p.amount, tokenId);
        (uint256 a0, uint256 a1) = p.pool.burn(p.tickLower, p.tickUpper, liquidity);
        _feeCalculation(tki, p);
        (uint128 f0, uint128 f1) = _feesOwed(tki, p, liquidity);
        tki.tokensOwed0 -= f0;
        tki.tokensOwed1 -= f1;
        p.pool.collect(context, p.tickLower, p.tickUpper, uint128(a0 + f0), uint128(a1 + f1));
        tki.totalLiquidity -= liquidity;
        tki.totalSupply -= p.amount;
        _burn(context, tokenId, p.amount);
        emit LogBurnedPosition(tokenId, liquidity, address(p.pool), context, p.tickLower, p.tickUpper);
        return p.amount;
    }

    function _feesOwed(TokenIdInfo storage tki, Params memory p, uint128 liquidity) private view returns (uint128 f0, uint128 f1) {
        uint160 sa = ClammMath.sqrtRatioAtTick(p.tickLower);
        uint160 sb = ClammMath.sqrtRatioAtTick(p.tickUpper);
        uint256 total0 = ClammMath.amount0ForLiquidity(sa, sb, tki.totalLiquidity);
        uint256 total1 = ClammMath.amount1ForLiquidity(sa, sb, tki.totalLiquidity);
        if (total0 > 0) f0 = uint128((tki.tokensOwed0 * ClammMath.amount0ForLiquidity(sa, sb, liquidity)) / total0);
        if (total1 > 0) f1 = uint128((tki.tokensOwed1 * ClammMath.amount1ForLiquidity(sa, sb, liquidity)) / total1);
    }

    function usePositionHandler(bytes calldata data)
        external
        onlyWhitelisted
        whenNotPaused
        returns (address[] memory tokens, uint256[] memory amounts, uint256)
    {
        Params memory p = _decode(data);
        uint256 tokenId = _id(p);
        TokenIdInfo storage tki = tokenIds[tokenId];
        (uint256 a0, uint256 a1) = p.pool.burn(p.tickLower, p.tickUpper, p.amount);
        p.pool.collect(msg.sender, p.tickLower, p.tickUpper, uint128(a0), uint128(a1));
        _feeCalculation(tki, p);
        tki.liquidityUsed += p.amount;
        tokens = new address[](2);
        (tokens[0], tokens[1]) = (tki.token0, tki.token1);
        amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (a0, a1);
        emit LogUsePosition(tokenId, p.amount);
        return (tokens, amounts, p.amount);
    }

    function unusePositionHandler(bytes calldata data)
        external
        onlyWhitelisted
        whenNotPaused
        returns (uint256[] memory amounts, uint256)
    {
        Params memory p = _decode(data);
        uint256 tokenId = _id(p);
        TokenIdInfo storage tki = tokenIds[tokenId];
        (uint256 a0, uint256 a1) = _amounts(p);
        uint128 liquidity = _add(tki, p, a0, a1);
        _feeCalculation(tki, p);
        if (tki.liquidityUsed >= liquidity) {
            tki.liquidityUsed -= liquidity;
        } else {
            tki.totalLiquidity += liquidity - tki.liquidityUsed;
            tki.liquidityUsed = 0;
        }
        amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (a0, a1);
        emit LogUnusePosition(tokenId, liquidity);
        return (amounts, liquidity);
    }

    function donateToPosition(bytes calldata data) external onlyWhitelisted whenNotPaused returns (uint256[] memory amounts, uint256) {
        Params memory p = _decode(data);
        uint256 tokenId = _id(p);
        TokenIdInfo storage tki = tokenIds[tokenId];
        (uint256 a0, uint256 a1) = _amounts(p);
        uint128 liquidity = _add(tki, p, a0, a1);
        _feeCalculation(tki, p);
        tki.totalLiquidity += liquidity;
        tki.donatedLiquidity = _donationLocked(tokenId) + liquidity;
        tki.lastDonation = uint64(block.number);
        if (newLockedBlockDuration != 0) {
            lockedBlockDuration = newLockedBlockDuration;
            newLockedBlockDuration = 0;
        }
        amounts = new uint256[](2);
        (amounts[0], amounts[1]) = (a0, a1);
        emit LogDonation(tokenId, liquidity);
        return (amounts, liquidity);
    }

    function _feeCalculation(TokenIdInfo storage tki, Params memory p) private {
        (, uint256 g0, uint256 g1,,) = p.pool.positions(keccak256(abi.encodePacked(address(this), p.tickLower, p.tickUpper)));
        unchecked {
            uint256 l = tki.totalLiquidity - tki.liquidityUsed;
            tki.tokensOwed0 += uint128(Math.mulDiv(g0 - tki.feeGrowthInside0LastX128, l, ClammMath.Q128));
            tki.tokensOwed1 += uint128(Math.mulDiv(g1 - tki.feeGrowthInside1LastX128, l, ClammMath.Q128));
            (tki.feeGrowthInside0LastX128, tki.feeGrowthInside1LastX128) = (g0, g1);
        }
    }

    function getHandlerIdentifier(bytes calldata data) external view returns (uint256) {
        (IPool pool, int24 tl, int24 tu) = abi.decode(data[:96], (IPool, int24, int24));
        return uint256(keccak256(abi.encode(address(this), pool, tl, tu)));
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

    function _tokensToPull(bytes calldata d) private view returns (address[] memory tokens, uint256[] memory amounts) {
        Params memory p = _decode(d);
        tokens = new address[](2);
        (tokens[0], tokens[1]) = (p.pool.token0(), p.pool.token1());
        amounts = new uint256[](2);
        (amounts[0], amounts[1]) = _amounts(p);
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
        return uint128(Math.mulDiv(assets, tki.totalSupply, (tki.totalLiquidity + 1) - _donationLocked(tokenId), Math.Rounding.Down));
    }

    function _convertToAssets(uint128 shares, uint256 tokenId) private view returns (uint128) {
        TokenIdInfo storage tki = tokenIds[tokenId];
        return uint128(Math.mulDiv(shares, (tki.totalLiquidity + 1) - _donationLocked(tokenId), tki.totalSupply, Math.Rounding.Up));
    }

    function updateWhitelistedApps(address _app, bool _status) external onlyRole(DEFAULT_ADMIN_ROLE) {
        whitelistedApps[_app] = _status;
        emit LogUpdateWhitelistedApp(_app, _status);
    }

    function updateLockedBlockDuration(uint64 _newLockedBlockDuration) external onlyRole(DEFAULT_ADMIN_ROLE) {
        newLockedBlockDuration = _newLockedBlockDuration;
        emit LogUpdatedLockedBlockDuration(_newLockedBlockDuration);
    }

    function supportsInterface(bytes4 interfaceId) public view override(ERC1155, AccessControl) returns (bool) {
        return super.supportsInterface(interfaceId);
    }

    function emergencyPause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function emergencyUnpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }
}
