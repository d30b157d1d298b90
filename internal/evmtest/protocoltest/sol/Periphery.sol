// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Multicall} from "@openzeppelin/contracts/utils/Multicall.sol";
import {IHook} from "./Interfaces.sol";

/// @notice As stryke-xyz/clamm's BoundedTTLHook_0Day (maxTtl 24 hours) and
/// BoundedTTLHook_1Week (7 days): a handler range under this hook can be
/// used only by whitelisted apps for options of at most maxTtl (the hook
/// data starts with abi.encode(app, ttl)); a refusal is a bare revert.
contract TestBoundedTTLHook is IHook, Ownable {
    mapping(address => bool) public whitelistedApps;
    uint256 public immutable maxTtl;

    constructor(uint256 _maxTtl) {
        maxTtl = _maxTtl;
    }

    function onPositionUse(bytes calldata _data) external view {
        (address app, uint256 ttl) = abi.decode(_data[:64], (address, uint256));
        if (!whitelistedApps[app]) revert();
        if (ttl > maxTtl) revert();
    }

    function onPositionUnUse(bytes calldata) external {}

    function updateWhitelistedAppsStatus(address app, bool status) external onlyOwner {
        whitelistedApps[app] = status;
    }
}

interface IOptionMarketLite {
    struct OptionData {
        uint256 opTickArrayLen;
        int24 tickLower;
        int24 tickUpper;
        uint256 expiry;
        bool isCall;
    }

    struct ExerciseOptionParams {
        uint256 optionId;
        address[] swapper;
        bytes[] swapData;
        uint256[] liquidityToExercise;
    }

    struct SettleOptionParams {
        uint256 optionId;
        address[] swapper;
        bytes[] swapData;
        uint256[] liquidityToSettle;
    }

    function opData(uint256 id) external view returns (OptionData memory);
    function exerciseOption(ExerciseOptionParams calldata p) external;
    function settleOption(SettleOptionParams calldata p) external;
    function callAsset() external view returns (address);
    function putAsset() external view returns (address);
    function ownerOf(uint256 id) external view returns (address);
}

/// @notice As stryke-xyz/clamm's AutoExerciseTimeBased: an executor
/// exercises an option for its owner (who made this contract an exercise
/// delegate) within timeToSettle of expiry, receives the profit (the
/// market pays msg.sender), keeps executorFee / 1e6 of it (at most 10%)
/// for feeTo and sends the rest to the owner.
///
/// As the real one: the checks in the same order (AlreadyExpired when
/// expiry < block.timestamp, TooSoon when more than timeToSettle is left,
/// GreedyExecutor above MAX_EXECUTOR_FEE), no fee at all while feeTo is
/// zero, the fee taken on the contract's whole balance of the profit token
/// after the exercise, the rest to ownerOf(tokenId) read after it. The
/// constructor grants only the admin role: the executor is granted by a
/// later grantRole, as the deployments' broadcasts do. It does not check
/// that _params.optionId is tokenId (neither does the real one).
contract TestAutoExerciseTimeBased is AccessControl, Multicall {
    using SafeERC20 for IERC20;

    address public feeTo;
    uint256 public constant MAX_EXECUTOR_FEE = 1e5;
    uint256 public constant EXECUTOR_FEE_PRECISION = 1e6;
    uint256 public timeToSettle = 5 minutes;
    bytes32 public constant EXECUTOR_ROLE = keccak256("EXECUTOR");

    error AutoExerciseOneMin__AlreadyExpired();
    error AutoExerciseOneMin__TooSoon();
    error AutoExerciseOneMin__GreedyExecutor();

    constructor() {
        _grantRole(DEFAULT_ADMIN_ROLE, msg.sender);
        _setRoleAdmin(EXECUTOR_ROLE, DEFAULT_ADMIN_ROLE);
    }

    function autoExercise(
        IOptionMarketLite market,
        uint256 tokenId,
        uint256 executorFee,
        IOptionMarketLite.ExerciseOptionParams calldata _params
    ) external onlyRole(EXECUTOR_ROLE) {
        IOptionMarketLite.OptionData memory od = market.opData(tokenId);
        if (od.expiry < block.timestamp) revert AutoExerciseOneMin__AlreadyExpired();
        if (od.expiry - block.timestamp > timeToSettle) revert AutoExerciseOneMin__TooSoon();
        if (executorFee > MAX_EXECUTOR_FEE) revert AutoExerciseOneMin__GreedyExecutor();
        market.exerciseOption(_params);
        IERC20 got = IERC20(od.isCall ? market.putAsset() : market.callAsset());
        uint256 amount = got.balanceOf(address(this));
        uint256 fees;
        if (feeTo != address(0)) {
            fees = (amount * executorFee) / EXECUTOR_FEE_PRECISION;
            if (fees > 0) got.safeTransfer(feeTo, fees);
        }
        got.safeTransfer(market.ownerOf(tokenId), amount - fees);
    }

    function updateFeeTo(address _newFeeTo) external onlyRole(DEFAULT_ADMIN_ROLE) {
        feeTo = _newFeeTo;
    }

    function updateTimeForSettle(uint256 _newTime) external onlyRole(DEFAULT_ADMIN_ROLE) {
        timeToSettle = _newTime;
    }
}
