// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ClammMath} from "./ClammMath.sol";
import {IPool, IFactory} from "./Interfaces.sol";

/// @notice What both test handlers share: liquidity added to a real Uniswap
/// V3 pool through pool.mint and the mint callback (stryke-xyz/clamm's
/// LiquidityManager: the caller of addLiquidity pays; the callback accepts
/// only the factory's pool of the key). Shares are the handler's own
/// tokens: ERC6909Shares below for V2, OpenZeppelin's ERC1155 for V1, as in
/// the real handlers.
abstract contract PoolLiquidity {
    using SafeERC20 for IERC20;

    struct AddLiquidityParams {
        address token0;
        address token1;
        uint24 fee;
        address recipient;
        int24 tickLower;
        int24 tickUpper;
        uint256 amount0Desired;
        uint256 amount1Desired;
        uint256 amount0Min;
        uint256 amount1Min;
    }

    address public immutable factory;

    constructor(address _factory) {
        factory = _factory;
    }

    /// @notice Adds liquidity to the pool of (token0, token1, fee) at its
    /// current price; the caller pays in the mint callback.
    function addLiquidity(AddLiquidityParams memory p)
        public
        returns (uint128 liquidity, uint256 amount0, uint256 amount1, IPool pool)
    {
        pool = IPool(IFactory(factory).getPool(p.token0, p.token1, p.fee));
        liquidity = ClammMath.liquidityForAmounts(
            _price(pool),
            ClammMath.sqrtRatioAtTick(p.tickLower),
            ClammMath.sqrtRatioAtTick(p.tickUpper),
            p.amount0Desired,
            p.amount1Desired
        );
        (amount0, amount1) =
            pool.mint(p.recipient, p.tickLower, p.tickUpper, liquidity, abi.encode(p.token0, p.token1, p.fee, msg.sender));
    }

    function uniswapV3MintCallback(uint256 amount0Owed, uint256 amount1Owed, bytes calldata data) external {
        (address t0, address t1, uint24 fee, address payer) = abi.decode(data, (address, address, uint24, address));
        require(msg.sender == IFactory(factory).getPool(t0, t1, fee));
        if (amount0Owed > 0) _pay(t0, payer, amount0Owed);
        if (amount1Owed > 0) _pay(t1, payer, amount1Owed);
    }

    function _pay(address token, address payer, uint256 value) private {
        if (payer == address(this)) IERC20(token).safeTransfer(msg.sender, value);
        else IERC20(token).safeTransferFrom(payer, msg.sender, value);
    }

    function _price(IPool pool) internal view returns (uint160 p) {
        (p,,,,,,) = pool.slot0();
    }
}

/// @notice The V2 handlers' shares: stryke-xyz/clamm's solmate-derived
/// ERC6909 (Transfer event with the caller first; balanceOf(owner, id)).
abstract contract ERC6909Shares {
    event Transfer(address caller, address indexed from, address indexed to, uint256 indexed id, uint256 amount);

    mapping(address => mapping(uint256 => uint256)) public balanceOf;

    function _mint(address to, uint256 id, uint256 amount) internal {
        balanceOf[to][id] += amount;
        emit Transfer(msg.sender, address(0), to, id, amount);
    }

    function _burn(address from, uint256 id, uint256 amount) internal {
        balanceOf[from][id] -= amount;
        emit Transfer(msg.sender, from, address(0), id, amount);
    }

    function transfer(address to, uint256 id, uint256 amount) external returns (bool) {
        balanceOf[msg.sender][id] -= amount;
        balanceOf[to][id] += amount;
        emit Transfer(msg.sender, msg.sender, to, id, amount);
        return true;
    }
}
