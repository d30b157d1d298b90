package indexer

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// receiptFields are types.Receipt's JSON members, in the order of its
// gencodec struct (receiptField's cases).
var receiptFields = []string{"type", "root", "status", "cumulativeGasUsed", "logsBloom", "logs", "transactionHash",
	"contractAddress", "gasUsed", "effectiveGasPrice", "blobGasUsed", "blobGasPrice", "blockHash", "blockNumber",
	"transactionIndex"}

// receipts reads eth_getBlockReceipts' answer: null (none) or an array of
// receipts, each null (a nil receipt) or one as types.Receipt's
// UnmarshalJSON reads it.
func (s *jscan) receipts(out *[]*types.Receipt) error {
	if null, err := s.null(); null || err != nil {
		if err == nil {
			*out = nil
		}
		return err
	}
	rs := []*types.Receipt{}
	err := s.elems(func() error {
		r, err := s.receipt()
		rs = append(rs, r)
		return err
	})
	*out = rs
	return err
}

// receiptPtr reads eth_getTransactionReceipt's answer: null (no receipt)
// or a receipt.
func (s *jscan) receiptPtr(out **types.Receipt) error {
	r, err := s.receipt()
	if err == nil {
		*out = r
	}
	return err
}

// receipt reads one receipt, nil for null: cumulativeGasUsed, logsBloom,
// logs, transactionHash and gasUsed required, the others kept when given.
func (s *jscan) receipt() (*types.Receipt, error) {
	if null, err := s.null(); null || err != nil {
		return nil, err
	}
	r := new(types.Receipt)
	err := s.gencodec("Receipt", receiptFields, []int{3, 4, 5, 6, 8}, func(i int, null bool) error {
		if null {
			var zero types.Receipt
			copyReceiptField(r, &zero, i)
			return nil
		}
		return s.receiptField(r, i)
	})
	return r, err
}

func (s *jscan) receiptField(r *types.Receipt, i int) error {
	var err error
	var n uint64
	switch i {
	case 0:
		n, err = s.quantity()
		r.Type = uint8(n) // as gencodec converts it: no range check
	case 1:
		r.PostState, err = s.hexBytes()
	case 2:
		r.Status, err = s.quantity()
	case 3:
		r.CumulativeGasUsed, err = s.quantity()
	case 4:
		err = s.bloom(&r.Bloom)
	case 5:
		r.Logs, err = s.logPtrs()
	case 6:
		err = s.fixed(r.TxHash[:])
	case 7:
		err = s.fixed(r.ContractAddress[:])
	case 8:
		r.GasUsed, err = s.quantity()
	case 9:
		r.EffectiveGasPrice, err = s.big()
	case 10:
		r.BlobGasUsed, err = s.quantity()
	case 11:
		r.BlobGasPrice, err = s.big()
	case 12:
		err = s.fixed(r.BlockHash[:])
	case 13:
		r.BlockNumber, err = s.big()
	case 14:
		n, err = s.quantity()
		r.TransactionIndex = uint(n)
	}
	return err
}

// copyReceiptField sets r's field i to from's.
func copyReceiptField(r, from *types.Receipt, i int) {
	switch i {
	case 0:
		r.Type = from.Type
	case 1:
		r.PostState = from.PostState
	case 2:
		r.Status = from.Status
	case 3:
		r.CumulativeGasUsed = from.CumulativeGasUsed
	case 4:
		r.Bloom = from.Bloom
	case 5:
		r.Logs = from.Logs
	case 6:
		r.TxHash = from.TxHash
	case 7:
		r.ContractAddress = from.ContractAddress
	case 8:
		r.GasUsed = from.GasUsed
	case 9:
		r.EffectiveGasPrice = from.EffectiveGasPrice
	case 10:
		r.BlobGasUsed = from.BlobGasUsed
	case 11:
		r.BlobGasPrice = from.BlobGasPrice
	case 12:
		r.BlockHash = from.BlockHash
	case 13:
		r.BlockNumber = from.BlockNumber
	case 14:
		r.TransactionIndex = from.TransactionIndex
	}
}

// logPtrs reads a receipt's logs: a non-null array whose null elements
// are nil logs (as encoding/json reads []*types.Log).
func (s *jscan) logPtrs() ([]*types.Log, error) {
	out := []*types.Log{}
	err := s.elems(func() error {
		null, err := s.null()
		if null || err != nil {
			out = append(out, nil)
			return err
		}
		l := new(types.Log)
		out = append(out, l)
		return s.log(l)
	})
	return out, err
}

// big reads a hexutil.Big through hexutil itself (rare: a receipt's
// prices and block number), so its value is go-ethereum's to the word.
func (s *jscan) big() (*big.Int, error) {
	raw, err := s.hexRaw()
	if err != nil {
		return nil, err
	}
	var b hexutil.Big
	if err := b.UnmarshalText(raw); err != nil {
		return nil, err
	}
	return b.ToInt(), nil
}
