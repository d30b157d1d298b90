// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice Runs a list of static calls inside one eth_call, where a call's
/// target may be the address an earlier call returned. Never deployed: the
/// gateway sends this contract's creation code with its constructor argument
/// as an eth_call without `to`, and the node returns what the constructor
/// returns. It turns "read the market's pool, then read the pool" from two
/// round trips into one.
contract ChainedRead {
    struct Call {
        // 0: call `target`. n > 0: call the address in the first word of
        // call n-1's return data; skipped (not ok, no data) when that call
        // failed or returned less than a word.
        uint256 targetFrom;
        address target;
        bytes data;
    }

    constructor(Call[] memory calls) {
        bool[] memory ok = new bool[](calls.length);
        bytes[] memory ret = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            address target = calls[i].target;
            uint256 from = calls[i].targetFrom;
            if (from != 0) {
                if (from > i || !ok[from - 1] || ret[from - 1].length < 32) {
                    continue;
                }
                target = address(uint160(uint256(bytes32(ret[from - 1]))));
            }
            (ok[i], ret[i]) = target.staticcall(calls[i].data);
        }
        bytes memory out = abi.encode(ok, ret);
        assembly {
            return(add(out, 32), mload(out))
        }
    }
}
