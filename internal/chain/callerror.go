package chain

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
)

// CallError classifies the error of one eth_call (alone, or an element of a
// JSON-RPC batch). Only a revert is the contract's answer (asRevert: JSON-RPC
// error code 3, or a message starting "execution reverted", as geth sends
// -32000 for a revert without data); it comes back as *RevertError with the
// revert data and its reason.
// Every other JSON-RPC error ("header not found", -32005 rate limit, "out of
// gas" from the node's gas cap, -32603) is the node failing, not the
// contract: a *problem.Error of kind 503 (rate limited), 504 (timed out) or
// 502 (anything else), with src's codes (problem.RPC, problem.Quote), its cause
// the node's error scrubbed and bounded for the log. go-ethereum gives every
// JSON-RPC error an ErrorData(), so its presence says nothing about a revert.
// An error that is not a JSON-RPC error is left to problem.Upstream.
func CallError(src problem.Source, err error) error {
	if err == nil {
		return nil
	}
	var re rpc.Error
	if !errors.As(err, &re) {
		return problem.Upstream(src, err)
	}
	if rev, ok := asRevert(err); ok {
		return rev
	}
	return nodeError(src, re, err)
}

// nodeError classifies a JSON-RPC error that is not a revert.
func nodeError(src problem.Source, re rpc.Error, err error) *problem.Error {
	msg := strings.ToLower(re.Error())
	cause := &problem.Cause{Text: fmt.Sprintf("JSON-RPC error %d: %s", re.ErrorCode(), secret.Scrub(re.Error())), Err: err}
	if be := blockError(re, cause); be != nil {
		return be
	}
	switch {
	case re.ErrorCode() == -32005 || rateLimited(re):
		return problem.Wrap(src.Unavailable, cause, "the rpc node refused the call (JSON-RPC error %d, rate limited)", re.ErrorCode())
	case strings.Contains(msg, "timeout") || strings.Contains(msg, "timed out"):
		return problem.Wrap(src.Timeout, cause, "the rpc node timed out (JSON-RPC error %d)", re.ErrorCode())
	default:
		return problem.Wrap(src.Error, cause, "the rpc node failed the call (JSON-RPC error %d)", re.ErrorCode())
	}
}
