package pipeline

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/ethereum/go-ethereum/rpc"
)

// RPCHandler serves JSON-RPC over HTTP (single calls and batches) by
// forwarding each call to the simulated node's in-process client, so the
// gateway's chain reader can reach the simulated EVM through its HTTP
// transport. Errors keep their code and data (a revert's reason bytes).
func RPCHandler(c *rpc.Client) http.Handler {
	type request struct {
		ID     json.RawMessage   `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *rpcError       `json:"error,omitempty"`
	}
	one := func(r *http.Request, q request) response {
		args := make([]any, len(q.Params))
		for i, p := range q.Params {
			args[i] = p
		}
		var out json.RawMessage
		err := c.CallContext(r.Context(), &out, q.Method, args...)
		resp := response{JSONRPC: "2.0", ID: q.ID}
		if err != nil {
			e := &rpcError{Code: -32000, Message: err.Error()}
			var coded rpc.Error
			if errors.As(err, &coded) {
				e.Code = coded.ErrorCode()
			}
			var de rpc.DataError
			if errors.As(err, &de) {
				e.Data = de.ErrorData()
			}
			resp.Error = e
			return resp
		}
		if out == nil {
			out = json.RawMessage("null")
		}
		resp.Result = out
		return resp
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if len(body) > 0 && body[0] == '[' {
			var qs []request
			if err := json.Unmarshal(body, &qs); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			out := make([]response, len(qs))
			for i, q := range qs {
				out[i] = one(r, q)
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var q request
		if err := json.Unmarshal(body, &q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(one(r, q))
	})
}
