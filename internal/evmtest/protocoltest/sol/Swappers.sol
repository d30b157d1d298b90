// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ISwapper, ISwapRouter} from "./Interfaces.sol";

/// @notice As stryke-xyz/clamm's SwapRouterSwapper: swapData is
/// abi.encode(uint24 fee, uint256 amountOutMinimum); one exactInputSingle
/// through Uniswap's SwapRouter, paying the caller (the market), deadline
/// now, no price limit.
contract TestSwapRouterSwapper is ISwapper {
    using SafeERC20 for IERC20;

    ISwapRouter public immutable sr;

    constructor(address _sr) {
        sr = ISwapRouter(_sr);
    }

    function onSwapReceived(address _tokenIn, address _tokenOut, uint256 _amountIn, bytes memory _swapData)
        external
        returns (uint256 amountOut)
    {
        (uint24 fee, uint256 amountOutMinimum) = abi.decode(_swapData, (uint24, uint256));
        IERC20(_tokenIn).safeIncreaseAllowance(address(sr), _amountIn);
        amountOut = sr.exactInputSingle(
            ISwapRouter.ExactInputSingleParams({
                tokenIn: _tokenIn,
                tokenOut: _tokenOut,
                fee: fee,
                recipient: msg.sender,
                deadline: block.timestamp,
                amountIn: _amountIn,
                amountOutMinimum: amountOutMinimum,
                sqrtPriceLimitX96: 0
            })
        );
    }
}

/// @notice As stryke-xyz/clamm's OneInchSwapper: allows the router to take
/// the input and forwards swapData to it verbatim; it checks nothing but
/// the call's success (the minimum is whatever the router calldata says).
contract TestOneInchSwapper is ISwapper {
    using SafeERC20 for IERC20;

    address public immutable oneInchRouter;

    constructor(address _oneInchRouter) {
        oneInchRouter = _oneInchRouter;
    }

    function onSwapReceived(address _tokenIn, address, uint256 _amountIn, bytes memory _swapData)
        external
        returns (uint256 amountOut)
    {
        IERC20(_tokenIn).safeIncreaseAllowance(oneInchRouter, _amountIn);
        (bool success,) = oneInchRouter.call(_swapData);
        require(success);
        return 0;
    }
}

/// @notice Stand-in for 1inch's AggregationRouterV5 with its `swap`
/// signature (selector 0x12aa3caf) and its checks: a zero minReturnAmount
/// is refused (ZeroMinReturn); desc.amount of srcToken is taken from the
/// caller; the output must reach dstReceiver in at least minReturnAmount
/// (ReturnAmountIsNotEnough). The route is one exactInputSingle through
/// Uniswap's SwapRouter, in the fee tier given by `data` =
/// abi.encode(uint24 fee); `executor` and `permit` are ignored.
contract FakeAggregationRouterV5 {
    using SafeERC20 for IERC20;

    struct SwapDescription {
        IERC20 srcToken;
        IERC20 dstToken;
        address payable srcReceiver;
        address payable dstReceiver;
        uint256 amount;
        uint256 minReturnAmount;
        uint256 flags;
    }

    error ZeroMinReturn();
    error ReturnAmountIsNotEnough();

    ISwapRouter public immutable sr;

    constructor(address _sr) {
        sr = ISwapRouter(_sr);
    }

    function swap(address, SwapDescription calldata desc, bytes calldata, bytes calldata data)
        external
        payable
        returns (uint256 returnAmount, uint256 spentAmount)
    {
        if (desc.minReturnAmount == 0) revert ZeroMinReturn();
        uint24 fee = abi.decode(data, (uint24));
        desc.srcToken.safeTransferFrom(msg.sender, address(this), desc.amount);
        desc.srcToken.safeIncreaseAllowance(address(sr), desc.amount);
        uint256 before = desc.dstToken.balanceOf(desc.dstReceiver);
        sr.exactInputSingle(
            ISwapRouter.ExactInputSingleParams({
                tokenIn: address(desc.srcToken),
                tokenOut: address(desc.dstToken),
                fee: fee,
                recipient: desc.dstReceiver,
                deadline: block.timestamp,
                amountIn: desc.amount,
                amountOutMinimum: 0,
                sqrtPriceLimitX96: 0
            })
        );
        returnAmount = desc.dstToken.balanceOf(desc.dstReceiver) - before;
        if (returnAmount < desc.minReturnAmount) revert ReturnAmountIsNotEnough();
        spentAmount = desc.amount;
    }
}
