// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice The Multicall3 functions the gateway calls (aggregate3 with
/// per-call allowFailure, getCurrentBlockTimestamp, getBlockNumber), with Multicall3's ABI
/// and semantics, for the simulated chain, which has no Multicall3 at its
/// canonical address: a test deploys this one and names it to the reader.
contract TestMulticall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (!ok && !calls[i].allowFailure) revert("Multicall3: call failed");
            returnData[i] = Result(ok, ret);
        }
    }

    function getCurrentBlockTimestamp() external view returns (uint256 timestamp) {
        timestamp = block.timestamp;
    }

    function getBlockNumber() external view returns (uint256 blockNumber) {
        blockNumber = block.number;
    }
}
