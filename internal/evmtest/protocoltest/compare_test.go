package protocoltest

import (
	"github.com/ethereum/go-ethereum/accounts/abi"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

func contractsMarket() abi.ABI { return contracts.OptionMarketV2 }
func contractsErrors() abi.ABI { return contracts.OptionMarketErrors }
