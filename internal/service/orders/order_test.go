package orders

import (
	"encoding/json"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// The domain separators of the five deployments, as the spec computed them
// from the contract's strings (../shared/spec/limit-orders.md §7).
func TestDomainSeparatorsOfTheDeployments(t *testing.T) {
	for _, c := range []struct {
		chain     uint64
		contract  string
		separator string
	}{
		{42161, "0x91e45D19861049f98bD9520042283Be9C7F960B5", "0x1ccec1167f345e32c015e24318c537a49280494496d80d34e60557f42cbd0599"},
		{5000, "0x71a26Cd2034302422ce9F567A36B5b1F8AD665f7", "0xf03480f5a9c69f527127ad8a40a2bda4cdd6c5f26afb298539a88ce03a640cf0"},
		{81457, "0x22E5d4e35a275524563B7B3cae1b062Bc6406F0B", "0x2ad9e011f8af5848c30860d9ecbd216a096eaf89467da6896acc5516c71cb7e0"},
		{8453, "0x5b064dFC69527302024BE6D15c0C7aE2e3875166", "0x8473ab8fb6b670818ad633c7470459c52d7c8a03a2352cc36626ab99b8e18190"},
		{146, "0x7Ab147BEfab9801B4644485a5d963E7eA26128a4", "0x34a8399b59ed4263ce202f9d481e02e36dc2bb8baff5475bb49a477f86584eff"},
	} {
		if got := DomainSeparator(c.chain, common.HexToAddress(c.contract)).Hex(); got != c.separator {
			t.Errorf("chain %d: %s, want %s", c.chain, got, c.separator)
		}
	}
	if got := orderTypeHash.Hex(); got != "0xda2beb922f09484b8638f5d228f2cc88575c64035c8ad86a01cdd7b33b7e516e" {
		t.Errorf("typehash %s", got)
	}
}

// A signature recovers its key over the digest; another key's, a v the
// contract refuses and a high s do not recover the maker.
func TestSignerRecoversAndRefusesWhatOpenZeppelinRefuses(t *testing.T) {
	key, _ := crypto.GenerateKey()
	maker := crypto.PubkeyToAddress(key.PublicKey)
	o := contracts.LimitOrder{CreatedAt: big.NewInt(1), Deadline: big.NewInt(2), Maker: maker, Flags: FlagsExercise, Data: make([]byte, 96)}
	d := Digest(42161, common.HexToAddress("0x91e45D19861049f98bD9520042283Be9C7F960B5"), o)
	raw, err := crypto.Sign(d[:], key)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := ParseSignature("0x" + common.Bytes2Hex(raw)) // v 0/1 as some signers give it
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Signer(d, sig); err != nil || got != maker {
		t.Fatalf("recovered %s, %v", got, err)
	}
	other := Digest(8453, common.HexToAddress("0x91e45D19861049f98bD9520042283Be9C7F960B5"), o)
	if got, _ := Signer(other, sig); got == maker {
		t.Fatal("recovered the maker over another chain's digest")
	}
	high := sig
	s := new(big.Int).Sub(crypto.S256().Params().N, new(big.Int).SetBytes(sig.S[:]))
	copy(high.S[:], common.LeftPadBytes(s.Bytes(), 32))
	high.V ^= 1
	if _, err := Signer(d, high); err == nil {
		t.Fatal("a high-s signature recovered")
	}
	bad := sig
	bad.V = 29
	if _, err := Signer(d, bad); err == nil {
		t.Fatal("v 29 recovered")
	}
}

func TestUintAcceptsTheHostedShapes(t *testing.T) {
	for in, want := range map[string]int64{`"272"`: 272, `"0x00000110"`: 272, `272`: 272} {
		var u Uint
		if err := json.Unmarshal([]byte(in), &u); err != nil || u.Int64() != want {
			t.Errorf("%s: %v %v", in, u.Int, err)
		}
	}
	for _, in := range []string{`"-1"`, `"1.5"`, `1e3`, `""`, `"0x"`, `true`} {
		var u Uint
		if err := json.Unmarshal([]byte(in), &u); err == nil {
			t.Errorf("%s accepted as %v", in, u.Int)
		}
	}
}

// Data whose words the contract's abi.decode would refuse is refused.
func TestDirtyDataIsRefused(t *testing.T) {
	good, _ := contracts.EncodeExerciseData(big.NewInt(5), big.NewInt(7), common.HexToAddress("0x01"))
	if _, _, _, err := contracts.DecodeExerciseData(good); err != nil {
		t.Fatal(err)
	}
	dirty := append([]byte{}, good...)
	dirty[64] = 1 // a stray bit above the market's 20 bytes
	if _, _, _, err := contracts.DecodeExerciseData(dirty); err == nil {
		t.Fatal("dirty address accepted")
	}
	if _, _, _, err := contracts.DecodeExerciseData(good[:95]); err == nil {
		t.Fatal("short data accepted")
	}
}
