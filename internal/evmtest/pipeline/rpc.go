package pipeline

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/jsonrpc"
)

// RPCHandler serves JSON-RPC over HTTP (single calls and batches) by
// forwarding each call to the simulated node's in-process client, so the
// gateway's chain reader can reach the simulated EVM through its HTTP
// transport. Errors keep their code and data (a revert's reason bytes).
func RPCHandler(c *rpc.Client) http.Handler {
	return jsonrpc.Handler(func(r *http.Request, q jsonrpc.Request) jsonrpc.Response {
		args := make([]any, len(q.Params))
		for i, p := range q.Params {
			args[i] = p
		}
		var out json.RawMessage
		err := c.CallContext(r.Context(), &out, q.Method, args...)
		if err == nil {
			return jsonrpc.Answer(q, out, nil)
		}
		e := &jsonrpc.Error{Code: -32000, Message: err.Error()}
		var coded rpc.Error
		if errors.As(err, &coded) {
			e.Code = coded.ErrorCode()
		}
		var de rpc.DataError
		if errors.As(err, &de) {
			e.Data = de.ErrorData()
		}
		return jsonrpc.Answer(q, nil, e)
	})
}
