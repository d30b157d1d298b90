package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// panicking stands in for a chain reader with a bug.
type panicking struct{ vocab.Chain }

func (panicking) MarketSnapshot(context.Context, common.Address) (*chain.MarketInfo, chain.PoolState, error) {
	panic("a bug")
}

func (panicking) StrikesView(context.Context, common.Address, []common.Address, []common.Address) (*chain.StrikesView, error) {
	panic("a bug")
}

func (panicking) StrikesViews(context.Context, []common.Address, []common.Address) ([]*chain.StrikesView, []error, error) {
	panic("a bug")
}

func (panicking) CompleteView(context.Context, *chain.StrikesView, []common.Address, []common.Address) error {
	panic("a bug")
}

// The documented 500 through a real route: a bug in a fill becomes the
// JSON error shape, its text only in the log.
func TestInternalErrorMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(gateway.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	o := gateway.DefaultOptions(service.New(map[uint64]*vocab.Upstreams{
		42161: {Config: cfg.Chains[42161], Chain: panicking{}, Subgraph: testenv.NewSubgraph(t, "http://sg.invalid", subgraph.Options{})}}))
	// The strikes chain's block comes first (the subgraph's indexed
	// block), then the panicking chain read.
	at := &indexedAt{r: block.Ref{Number: 7, Hash: "0x07", Timestamp: 1}}
	if o.Pins, err = block.New(map[uint64]block.Sources{42161: {Indexed: at, Headers: at}}, block.HeadAges{}); err != nil {
		t.Fatal(err)
	}
	srv, err := gateway.New(o)
	if err != nil {
		t.Fatal(err)
	}
	rec := get(t, srv, strikes)
	var body any
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != http.StatusInternalServerError || doc.Components.Schemas["Error"].Value.VisitJSON(body) != nil || strings.Contains(rec.Body.String(), "a bug") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if _, ok := doc.Paths.Find(gateway.PathStrikesChain).Get.Responses.Map()["500"]; !ok {
		t.Fatal("500 is not documented")
	}
}

// indexedAt is a subgraph that has indexed r, over a chain whose headers
// the test never asks for.
type indexedAt struct {
	r    block.Ref
	seen block.Seen
	block.HeaderReader
}

func (i *indexedAt) IndexedHead(context.Context) (block.Ref, error) { return i.r, nil }
func (i *indexedAt) Seen() *block.Seen                              { return &i.seen }
