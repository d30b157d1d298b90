// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice Runs one transaction as its signer would send it and measures what
/// it moves, inside one eth_call. Never deployed: the gateway places this
/// creation code, with its constructor arguments, as the code of the
/// signer's own address through eth_call's state override and calls that
/// address, so the constructor runs with address(this) == the signer. The
/// call to `target` then has the signer as msg.sender, exactly as the signed
/// transaction would (a position manager credits shares to msg.sender, a
/// handler's reserveLiquidity reads it); the balances read before and after
/// are the signer's own. The code override changes nothing the target reads
/// of the signer (its balances and allowances are the tokens' storage).
///
/// Returns abi.encode(bool ok, bytes ret, int256[] tokenDeltas, int256
/// shareDelta): ok and ret are the call's outcome (ret is the revert data
/// when it failed, and the deltas are then 0); tokenDeltas[i] is the change
/// of the signer's balance of tokens[i]; shareDelta the change of its
/// ERC-6909 balance of shareId on shareToken (0 when shareToken is zero).
///
/// While the probe is the signer's code, the signer is a contract to the
/// target: the V1 handler's shares are OpenZeppelin ERC1155, whose mint and
/// transfer call onERC1155Received on a receiver with code. A signer without
/// code takes them unasked, so the probe answers those two callbacks with
/// their selectors (an ERC1155 receiver's yes) before anything else.
contract ActionProbe {
    constructor(address target, bytes memory data, address[] memory tokens, address shareToken, uint256 shareId) {
        assembly {
            if iszero(lt(calldatasize(), 4)) {
                let sel := shr(224, calldataload(0))
                // onERC1155Received, onERC1155BatchReceived
                if or(eq(sel, 0xf23a6e61), eq(sel, 0xbc197c81)) {
                    mstore(0, shl(224, sel))
                    return(0, 32)
                }
            }
        }
        uint256[] memory before = new uint256[](tokens.length);
        for (uint256 i = 0; i < tokens.length; i++) {
            before[i] = _balance(tokens[i]);
        }
        uint256 sharesBefore = _shares(shareToken, shareId);
        (bool ok, bytes memory ret) = target.call(data);
        int256[] memory deltas = new int256[](tokens.length);
        int256 shareDelta;
        if (ok) {
            for (uint256 i = 0; i < tokens.length; i++) {
                deltas[i] = int256(_balance(tokens[i])) - int256(before[i]);
            }
            shareDelta = int256(_shares(shareToken, shareId)) - int256(sharesBefore);
        }
        bytes memory out = abi.encode(ok, ret, deltas, shareDelta);
        assembly {
            return(add(out, 32), mload(out))
        }
    }

    function _balance(address token) private view returns (uint256 v) {
        (bool ok, bytes memory r) = token.staticcall(abi.encodeWithSignature("balanceOf(address)", address(this)));
        if (ok && r.length >= 32) v = abi.decode(r, (uint256));
    }

    function _shares(address token, uint256 id) private view returns (uint256 v) {
        if (token == address(0)) return 0;
        (bool ok, bytes memory r) =
            token.staticcall(abi.encodeWithSignature("balanceOf(address,uint256)", address(this), id));
        if (ok && r.length >= 32) v = abi.decode(r, (uint256));
    }
}
