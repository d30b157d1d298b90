package service

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
)

var panicSelector = []byte{0x4e, 0x48, 0x7b, 0x71}

// abiUnpackRevert decodes Error(string) and Panic(uint256) revert data.
func abiUnpackRevert(data []byte) (string, error) {
	if reason, err := abi.UnpackRevert(data); err == nil {
		return reason, nil
	}
	if len(data) == 36 && string(data[:4]) == string(panicSelector) {
		return fmt.Sprintf("Panic(0x%x)", new(big.Int).SetBytes(data[4:])), nil
	}
	return "", errors.New("not Error(string) or Panic(uint256)")
}
