// Package subgraph is the gateway's Graph Node client: it runs the documents
// of package queries with hasura/go-graphql-client's raw execution, decodes
// Graph Node's scalars (BigInt and Bytes as strings) into Go types, and maps
// every failure onto the problem vocabulary. A response that carries GraphQL
// errors is a failure even when it also carries data: Graph Node reports
// indexing errors that way, and a partial answer must never be cached.
package subgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	graphql "github.com/hasura/go-graphql-client"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Graph Node's limits on collection arguments.
const (
	MaxFirst = 1000
	MaxSkip  = 5000
)

// Client queries one subgraph.
type Client struct {
	gql      *graphql.Client
	docs     queries.Set
	timeout  time.Duration
	pageSize int
	maxPages int
	maxBytes int64
	// seen is the indexed head as last read (Seen).
	seen block.Seen
}

// Options configure a Client. Timeout and MaxBytes are required: the
// composition root passes CLAMM_UPSTREAM_TIMEOUT and the upstream body
// bound, tests the same through internal/testenv.NewSubgraph.
type Options struct {
	HTTPClient *http.Client  // nil: http.DefaultClient
	Docs       queries.Set   // nil: the embedded documents
	Timeout    time.Duration // deadline of one query
	// PageSize is strikes per page; 0 (or more than Graph Node's MaxFirst)
	// means MaxFirst, the protocol's own bound, not a configured value.
	PageSize int
	// MaxBytes bounds one answer however many pages it takes: a subgraph
	// paging without end cannot grow one request's memory past what a
	// single answer may hold.
	MaxBytes int64
}

// New returns a client for the Graph Node query URL. The library's retry
// option is left off: it sleeps without watching the context. A zero or
// negative Timeout or MaxBytes is refused, naming it, not replaced by a
// bound of the client's own.
func New(url string, opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		return nil, errors.New("subgraph: Timeout must be positive")
	}
	if opts.MaxBytes <= 0 {
		return nil, errors.New("subgraph: MaxBytes must be positive")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	if opts.Docs == nil {
		opts.Docs = queries.Embedded()
	}
	if opts.PageSize <= 0 || opts.PageSize > MaxFirst {
		opts.PageSize = MaxFirst
	}
	return &Client{gql: graphql.NewClient(url, opts.HTTPClient), docs: opts.Docs, timeout: opts.Timeout, pageSize: opts.PageSize, maxPages: 100, maxBytes: opts.MaxBytes}, nil
}

// Meta is Graph Node's _meta: which block the answer reflects. Graph Node
// gives no hash for a block asked by number: an answer's pages take it
// from the answer's pin (package block), and it is empty without one.
type Meta struct {
	Block             uint64
	Hash              string
	Timestamp         int64
	HasIndexingErrors bool
}

func (m Meta) ref() block.Ref {
	return block.Ref{Number: m.Block, Hash: m.Hash, Timestamp: m.Timestamp}
}

type metaJSON struct {
	Block struct {
		Number    uint64  `json:"number"`
		Hash      *string `json:"hash"`
		Timestamp *int64  `json:"timestamp"`
	} `json:"block"`
	HasIndexingErrors bool `json:"hasIndexingErrors"`
}

func (m metaJSON) meta() Meta {
	out := Meta{Block: m.Block.Number, HasIndexingErrors: m.HasIndexingErrors}
	if m.Block.Timestamp != nil {
		out.Timestamp = *m.Block.Timestamp
	}
	if m.Block.Hash != nil {
		out.Hash = strings.ToLower(*m.Block.Hash)
	}
	return out
}

// exec runs document name with vars and decodes the data into out.
func (c *Client) exec(ctx context.Context, name string, vars map[string]any, out any) error {
	_, err := c.execSized(ctx, name, vars, out)
	return err
}

// execSized is exec that also says how many bytes of data it decoded.
func (c *Client) execSized(ctx context.Context, name string, vars map[string]any, out any) (int, error) {
	doc, ok := c.docs[name]
	if !ok {
		return 0, fmt.Errorf("subgraph: no document %q", name)
	}
	pin, claimed, err := pinVar(ctx, doc, vars)
	if err != nil {
		return 0, err
	}
	at := time.Now()
	n, err := c.run(ctx, doc, vars, out)
	if claimed {
		c.resolvePin(pin, out, err, at)
	}
	return n, err
}

func (c *Client) run(ctx context.Context, doc queries.Document, vars map[string]any, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	data, err := c.gql.ExecRaw(ctx, doc.Text, vars, graphql.OperationName(doc.OperationName))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", doc.OperationName, classify(err))
	}
	if len(data) == 0 || string(data) == "null" {
		return 0, fmt.Errorf("%s: %w", doc.OperationName, garbage(errors.New("no data")))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return 0, fmt.Errorf("%s: %w", doc.OperationName, garbage(err))
	}
	return len(data), nil
}

// classify maps the library's errors: transport failures by their cause,
// HTTP statuses by code, and errors the server put in the body (err == nil
// inside) as SUBGRAPH_ERROR or SUBGRAPH_INDEXING_ERROR.
func classify(err error) error {
	var gerrs graphql.Errors
	if !errors.As(err, &gerrs) || len(gerrs) == 0 {
		return problem.Upstream(problem.Subgraph, err)
	}
	for _, ge := range gerrs {
		var ne graphql.NetworkError
		if errors.As(ge.Unwrap(), &ne) {
			if ne.StatusCode() == http.StatusTooManyRequests || ne.StatusCode() == http.StatusServiceUnavailable {
				return problem.Wrap(problem.SubgraphUnavailable, err, "the subgraph refused the request (HTTP %d)", ne.StatusCode())
			}
			return problem.Wrap(problem.SubgraphError, err, "the subgraph answered HTTP %d", ne.StatusCode())
		}
		if cause := ge.Unwrap(); cause != nil && (errors.Is(cause, problem.ErrOverloaded) || errors.Is(cause, problem.ErrTooLarge)) {
			return problem.Upstream(problem.Subgraph, cause)
		}
		if cause := ge.Unwrap(); cause != nil {
			// A body that stops or trickles past the deadline surfaces as a
			// decode error wrapping the deadline: it is a timeout.
			var ne net.Error
			code, _ := ge.Extensions["code"].(string)
			if code == graphql.ErrRequestError || errors.Is(cause, context.DeadlineExceeded) || (errors.As(cause, &ne) && ne.Timeout()) {
				return problem.Upstream(problem.Subgraph, cause)
			}
			return garbage(cause)
		}
	}
	code, msg := problem.SubgraphError, "the subgraph answered with GraphQL errors"
	for _, ge := range gerrs {
		if be := blockError(ge.Message, err); be != nil {
			return be
		}
		if strings.Contains(ge.Message, "indexing_error") || strings.Contains(strings.ToLower(ge.Message), "indexing error") {
			code, msg = problem.SubgraphIndexingError, "the subgraph reports an indexing error; its data cannot be trusted"
		}
	}
	return problem.Wrap(code, err, "%s", msg)
}

func garbage(err error) error {
	return problem.Wrap(problem.SubgraphError, err, "the subgraph returned data that does not decode")
}

// BigInt decodes Graph Node's BigInt (a JSON string of decimal digits).
// Every BigInt of the schema the gateway reads holds a uint256 on chain, so
// a value is refused before it is parsed when it is longer than maxBigInt
// characters (big.Int parses decimal in quadratic time: a megabyte of digits
// took 30 s of CPU) or negative.
type BigInt struct{ *big.Int }

// maxBigInt is the longest BigInt accepted: 2^256-1 has 78 digits; two
// quotes and some slack for leading zeros.
const maxBigInt = 96

// UnmarshalJSON accepts a decimal string (or a bare number, to be lenient).
func (b *BigInt) UnmarshalJSON(raw []byte) error {
	if len(raw) > maxBigInt {
		return fmt.Errorf("BigInt of %d characters", len(raw))
	}
	s := strings.Trim(string(raw), `"`)
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return fmt.Errorf("bad BigInt %s", raw)
	}
	if v.Sign() < 0 || v.BitLen() > 256 {
		return fmt.Errorf("BigInt %s is not a uint256", raw)
	}
	b.Int = v
	return nil
}

// checkSqrtPrice refuses a sqrtPriceX96 that no Uniswap V3 pool can hold
// (a uint160): past it a price is not finite, and a history record would
// carry +Inf, which JSON cannot encode.
func checkSqrtPrice(what string, v *big.Int) error {
	if v.BitLen() > 160 {
		return garbage(fmt.Errorf("%s: sqrtPriceX96 of %d bits", what, v.BitLen()))
	}
	return nil
}

// Address decodes Graph Node's Bytes holding a 20-byte address.
type Address common.Address

// UnmarshalJSON accepts "0x" + 40 hex digits in any case.
func (a *Address) UnmarshalJSON(raw []byte) error {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return err
	}
	if !common.IsHexAddress(s) {
		return fmt.Errorf("bad address %q", s)
	}
	*a = Address(common.HexToAddress(s))
	return nil
}

// Addr returns the common.Address.
func (a Address) Addr() common.Address { return common.Address(a) }

// LowerHex is how Graph Node stores and compares Bytes: lowercase with 0x.
func LowerHex(a common.Address) string { return strings.ToLower(a.Hex()) }

// Meta asks which block the subgraph has indexed, and remembers it as the
// head seen (Seen).
func (c *Client) Meta(ctx context.Context) (Meta, error) {
	at := time.Now()
	m, err := c.meta(ctx)
	if err == nil {
		c.seen.Saw(m.ref(), at)
	}
	return m, err
}

func (c *Client) meta(ctx context.Context) (Meta, error) {
	var out struct {
		Meta metaJSON `json:"_meta"`
	}
	if err := c.exec(ctx, queries.Meta, map[string]any{}, &out); err != nil {
		return Meta{}, err
	}
	return out.Meta.meta(), nil
}
