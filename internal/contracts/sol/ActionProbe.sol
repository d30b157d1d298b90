// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice Runs transactions one after another as their signer would send
/// them and measures what each moves, inside one eth_call. Never deployed:
/// the gateway places this creation code, with its constructor arguments,
/// as the code of the signer's own address through eth_call's state
/// override and calls that address, so the constructor runs with
/// address(this) == the signer. Each call to a step's `target` then has the
/// signer as msg.sender, exactly as the signed transaction would (a
/// position manager credits shares to msg.sender, a handler's
/// reserveLiquidity reads it); the balances read before and after are the
/// signer's own. The code override changes nothing the targets read of the
/// signer (its balances and allowances are the tokens' storage).
///
/// Steps run in order on the state the ones before left: a step that
/// reverts leaves nothing (the EVM undoes it) and the next runs as if it
/// had not been sent. Before a step, `quote` (when not empty) is
/// staticcalled on shareToken and the first word of its answer reported:
/// what a handler's convertToAssets says the step's shares are worth right
/// then.
///
/// Returns abi.encode(Outcome[]): per step, ok and ret are the call's
/// outcome (ret is the revert data when it failed, and the deltas are
/// then 0); tokenDeltas[i] is the change of the signer's balance of
/// tokens[i]; shareDelta the change of its ERC-6909 balance of shareId on
/// shareToken (0 when shareToken is zero); quoted the quote's word (0
/// without one, or when it failed).
///
/// While the probe is the signer's code, the signer is a contract to the
/// targets: the V1 handler's shares are OpenZeppelin ERC1155, whose mint and
/// transfer call onERC1155Received on a receiver with code. A signer without
/// code takes them unasked, so the probe answers those two callbacks with
/// their selectors (an ERC1155 receiver's yes) before anything else. The
/// same holds for an option market's mintOption, which mints the option
/// with OpenZeppelin's ERC721 _safeMint: the probe answers
/// onERC721Received too.
contract ActionProbe {
    struct Step {
        address target;
        bytes data;
        bytes quote;
    }

    struct Outcome {
        bool ok;
        bytes ret;
        int256[] tokenDeltas;
        int256 shareDelta;
        uint256 quoted;
    }

    constructor(Step[] memory steps, address[] memory tokens, address shareToken, uint256 shareId) {
        assembly {
            if iszero(lt(calldatasize(), 4)) {
                let sel := shr(224, calldataload(0))
                // onERC1155Received, onERC1155BatchReceived, onERC721Received
                if or(or(eq(sel, 0xf23a6e61), eq(sel, 0xbc197c81)), eq(sel, 0x150b7a02)) {
                    mstore(0, shl(224, sel))
                    return(0, 32)
                }
            }
        }
        Outcome[] memory outs = new Outcome[](steps.length);
        for (uint256 s = 0; s < steps.length; s++) {
            outs[s] = _run(steps[s], tokens, shareToken, shareId);
        }
        bytes memory out = abi.encode(outs);
        assembly {
            return(add(out, 32), mload(out))
        }
    }

    function _run(Step memory step, address[] memory tokens, address shareToken, uint256 shareId)
        private
        returns (Outcome memory o)
    {
        if (step.quote.length > 0 && shareToken != address(0)) {
            (bool qok, bytes memory q) = shareToken.staticcall(step.quote);
            if (qok && q.length >= 32) o.quoted = abi.decode(q, (uint256));
        }
        uint256[] memory before = new uint256[](tokens.length);
        for (uint256 i = 0; i < tokens.length; i++) {
            before[i] = _balance(tokens[i]);
        }
        uint256 sharesBefore = _shares(shareToken, shareId);
        (o.ok, o.ret) = step.target.call(step.data);
        o.tokenDeltas = new int256[](tokens.length);
        if (o.ok) {
            for (uint256 i = 0; i < tokens.length; i++) {
                o.tokenDeltas[i] = int256(_balance(tokens[i])) - int256(before[i]);
            }
            o.shareDelta = int256(_shares(shareToken, shareId)) - int256(sharesBefore);
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
