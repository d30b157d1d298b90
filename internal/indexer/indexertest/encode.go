package indexertest

import (
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// The scale node writes its answers by appending to one buffer, in the
// bytes encoding/json writes for the values it answered before (maps
// with their keys sorted, go-ethereum's types by their MarshalJSON, the
// envelope by jsonrpc.Response): no reflection, no value built only to
// be encoded. scale_ref_test.go keeps the reflective encoder and checks
// the two byte for byte.

// appendHex appends b as a quoted 0x-prefixed lowercase hex string
// (hexutil.Bytes, common.Hash and common.Address encode so).
func appendHex(dst, b []byte) []byte {
	dst = append(dst, `"0x`...)
	dst = hex.AppendEncode(dst, b)
	return append(dst, '"')
}

// appendQuantity appends n as hexutil.Uint64 (and hexutil.Uint) encode it.
func appendQuantity(dst []byte, n uint64) []byte {
	dst = append(dst, `"0x`...)
	dst = strconv.AppendUint(dst, n, 16)
	return append(dst, '"')
}

// appendLog appends l as types.Log's MarshalJSON writes it.
func appendLog(dst []byte, l *types.Log) []byte {
	dst = append(dst, `{"address":`...)
	dst = appendHex(dst, l.Address[:])
	dst = append(dst, `,"topics":`...)
	if l.Topics == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i := range l.Topics {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendHex(dst, l.Topics[i][:])
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"data":`...)
	dst = appendHex(dst, l.Data)
	dst = append(dst, `,"blockNumber":`...)
	dst = appendQuantity(dst, l.BlockNumber)
	dst = append(dst, `,"transactionHash":`...)
	dst = appendHex(dst, l.TxHash[:])
	dst = append(dst, `,"transactionIndex":`...)
	dst = appendQuantity(dst, uint64(l.TxIndex))
	dst = append(dst, `,"blockHash":`...)
	dst = appendHex(dst, l.BlockHash[:])
	dst = append(dst, `,"blockTimestamp":`...)
	dst = appendQuantity(dst, l.BlockTimestamp)
	dst = append(dst, `,"logIndex":`...)
	dst = appendQuantity(dst, uint64(l.Index))
	dst = append(dst, `,"removed":`...)
	dst = strconv.AppendBool(dst, l.Removed)
	return append(dst, '}')
}

// blockRef is a block's number and hash.
type blockRef struct {
	n    uint64
	hash common.Hash
}

// appendTx appends a block's full transaction i (the keys sorted, as
// encoding/json writes a map).
func appendTx(dst []byte, at blockRef, i int, t txHead) []byte {
	n, bh := at.n, at.hash
	dst = append(dst, `{"blockHash":`...)
	dst = appendHex(dst, bh[:])
	dst = append(dst, `,"blockNumber":`...)
	dst = appendQuantity(dst, n)
	dst = append(dst, `,"from":`...)
	dst = appendHex(dst, t.from[:])
	dst = append(dst, `,"hash":`...)
	dst = appendHex(dst, t.hash[:])
	dst = append(dst, `,"input":"0x","to":`...)
	dst = appendHex(dst, t.to[:])
	dst = append(dst, `,"transactionIndex":`...)
	dst = appendQuantity(dst, uint64(i))
	return append(dst, '}')
}

// zeroBloom is an empty logsBloom as hexutil.Bytes encodes it.
var zeroBloom = appendHex(nil, make([]byte, 256))

// appendReceipt appends transaction i's receipt with its logs (those of
// all with transaction index i), the keys sorted.
func appendReceipt(dst []byte, at blockRef, i int, t txHead, all []types.Log) []byte {
	n, bh := at.n, at.hash
	dst = append(dst, `{"blockHash":`...)
	dst = appendHex(dst, bh[:])
	dst = append(dst, `,"blockNumber":`...)
	dst = appendQuantity(dst, n)
	dst = append(dst, `,"contractAddress":null,"cumulativeGasUsed":"0x0","effectiveGasPrice":"0x0","from":`...)
	dst = appendHex(dst, t.from[:])
	dst = append(dst, `,"gasUsed":"0x0","logs":[`...)
	first := true
	for k := range all {
		if all[k].TxIndex != uint(i) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendLog(dst, &all[k])
	}
	dst = append(dst, `],"logsBloom":`...)
	dst = append(dst, zeroBloom...)
	dst = append(dst, `,"status":"0x1","to":`...)
	dst = appendHex(dst, t.to[:])
	dst = append(dst, `,"transactionHash":`...)
	dst = appendHex(dst, t.hash[:])
	dst = append(dst, `,"transactionIndex":`...)
	dst = appendQuantity(dst, uint64(i))
	return append(dst, `,"type":"0x2"}`...)
}

// appendID appends a call's id as jsonrpc.Response encodes it: a number
// as it came, anything else through encoding/json (compacted, HTML
// escaped, null when absent).
func appendID(dst, id []byte) []byte {
	simple := len(id) > 0
	for _, c := range id {
		if !isDigit(c) && c != '-' {
			simple = false
		}
	}
	if simple {
		return append(dst, id...)
	}
	raw, err := json.Marshal(json.RawMessage(id))
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}

// appendError appends an error object as encoding/json writes rpcError.
func appendError(dst []byte, e *rpcError) []byte {
	raw, err := json.Marshal(e)
	if err != nil {
		return append(dst, "null"...)
	}
	return append(dst, raw...)
}
