package orders

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// The contract's flags (stryke-xyz/clamm OrderLib) and the two kinds of
// order the gateway keeps: a limit exercise (take-profit, SELL +
// MARKET_FILL) and a limit purchase (BUY + MARKET_FILL). OTC offers and
// bids are not kept: no route fills them.
const (
	FlagOTC        uint32 = 0x001
	FlagMarketFill uint32 = 0x010
	FlagSell       uint32 = 0x100
	FlagBuy        uint32 = 0x200

	FlagsExercise = FlagSell | FlagMarketFill
	FlagsPurchase = FlagBuy | FlagMarketFill
)

// Kind names what an order does.
type Kind string

// The kinds.
const (
	KindExercise Kind = "exercise"
	KindPurchase Kind = "purchase"
)

// Domain is the contract's EIP-712 domain on a chain.
const (
	DomainName    = "Stryke Limit Orders"
	DomainVersion = "1"
)

var (
	orderTypeHash  = crypto.Keccak256Hash([]byte("Order(uint256 createdAt,uint256 deadline,address maker,address validator,uint32 flags,bytes data)"))
	domainTypeHash = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	nameHash       = crypto.Keccak256Hash([]byte(DomainName))
	versionHash    = crypto.Keccak256Hash([]byte(DomainVersion))
	secp256k1HalfN = new(big.Int).Rsh(crypto.S256().Params().N, 1)
)

// Order is a signed order as the contract takes it.
type Order struct {
	contracts.LimitOrder
	Sig contracts.LimitSig
}

// Contract is the order as the contract's Order tuple.
func (o Order) Contract() contracts.LimitOrder { return o.LimitOrder }

func word(n *big.Int) []byte { return common.LeftPadBytes(n.Bytes(), 32) }

// StructHash is getOrderStructHash: the key of isOrderCancelled, and the
// order's id in the book (with the chain).
func StructHash(o contracts.LimitOrder) common.Hash {
	return crypto.Keccak256Hash(orderTypeHash[:], word(o.CreatedAt), word(o.Deadline),
		common.LeftPadBytes(o.Maker[:], 32), common.LeftPadBytes(o.Validator[:], 32),
		word(new(big.Int).SetUint64(uint64(o.Flags))), crypto.Keccak256(o.Data))
}

// DomainSeparator is the contract's EIP-712 domain separator.
func DomainSeparator(chainID uint64, contract common.Address) common.Hash {
	return crypto.Keccak256Hash(domainTypeHash[:], nameHash[:], versionHash[:],
		word(new(big.Int).SetUint64(chainID)), common.LeftPadBytes(contract[:], 32))
}

// Digest is computeDigest: keccak256(0x1901 ‖ domainSeparator ‖ structHash).
func Digest(chainID uint64, contract common.Address, o contracts.LimitOrder) common.Hash {
	sep := DomainSeparator(chainID, contract)
	h := StructHash(o)
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, sep[:], h[:])
}

// Signer is getOrderSigner: the address the signature recovers to over the
// digest, refused where OpenZeppelin's ECDSA.recover reverts (v not 27/28,
// s in the upper half).
func Signer(digest common.Hash, s contracts.LimitSig) (common.Address, error) {
	if s.V != 27 && s.V != 28 {
		return common.Address{}, fmt.Errorf("v is %d: the contract recovers only v = 27 or 28", s.V)
	}
	if new(big.Int).SetBytes(s.S[:]).Cmp(secp256k1HalfN) > 0 {
		return common.Address{}, fmt.Errorf("s is in the upper half of the curve order: the contract refuses it (OpenZeppelin ECDSA)")
	}
	sig := append(append(append([]byte{}, s.R[:]...), s.S[:]...), s.V-27)
	pub, err := crypto.SigToPub(digest[:], sig)
	if err != nil {
		return common.Address{}, err
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// ParseSignature reads a wallet's 65-byte r ‖ s ‖ v hex. v 0 or 1 (some
// signers) is stored as 27 or 28, the form the contract recovers.
func ParseSignature(s string) (contracts.LimitSig, error) {
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != 65 {
		return contracts.LimitSig{}, problem.InvalidParam("signature", "want the 65-byte r‖s‖v signature as 0x-hex")
	}
	var out contracts.LimitSig
	copy(out.R[:], b[:32])
	copy(out.S[:], b[32:64])
	out.V = b[64]
	if out.V < 27 {
		out.V += 27
	}
	return out, nil
}

// Uint is an unsigned integer field that arrives as a decimal string, a
// 0x-hex string or a JSON number (the hosted API's clients send all
// three for flags, and strings for the times).
type Uint struct{ *big.Int }

// UnmarshalJSON accepts "123", "0x7b" and 123.
func (u *Uint) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	var n big.Int
	ok := false
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		_, ok = n.SetString(s[2:], 16)
	} else if s != "" && !strings.ContainsAny(s, ".eE+-") {
		_, ok = n.SetString(s, 10)
	}
	if !ok || n.Sign() < 0 || n.BitLen() > 256 {
		return fmt.Errorf("%s is not an unsigned 256-bit integer", s)
	}
	u.Int = &n
	return nil
}

// MarshalJSON writes the decimal string.
func (u Uint) MarshalJSON() ([]byte, error) {
	if u.Int == nil {
		return []byte("null"), nil
	}
	return json.Marshal(u.String())
}
