package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

// firstLogs remembers the node's eth_getLogs filter of the lowest block
// (ranges are fetched several at once: the first sent may be a later one).
type firstLogs struct {
	next   http.Handler
	mu     sync.Mutex
	filter map[string]any
}

func fromBlock(filter map[string]any) uint64 {
	n, _ := hexutil.DecodeUint64(fmt.Sprint(filter["fromBlock"]))
	return n
}

func (f *firstLogs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var q struct {
		Method string
		Params []map[string]any
	}
	if json.Unmarshal(body, &q) == nil && q.Method == "eth_getLogs" && len(q.Params) == 1 {
		f.mu.Lock()
		if f.filter == nil || fromBlock(q.Params[0]) < fromBlock(f.filter) {
			f.filter = q.Params[0]
		}
		f.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	f.next.ServeHTTP(w, r)
}

// The live start of the operations guide: Arbitrum's RPC URL and nothing
// else. The gateway indexes the chain itself, from the deployments
// registry's data sources and start blocks, with the embedded build; it
// is not ready until it has reached the head, then is, and serves its
// store's query API.
func TestOneVariableIndexesArbitrum(t *testing.T) {
	m, err := mapping.ForChain(42161)
	if err != nil {
		t.Fatal(err)
	}
	first := m.Sources[0].StartBlock
	for _, ds := range m.Sources {
		first = min(first, ds.StartBlock)
	}
	head := first + 500
	chain := indexertest.New(42161, head)
	node := &firstLogs{next: chain}
	srv := httptest.NewServer(node)
	defer srv.Close()
	base, _, stderr, stop := start(t, map[string]string{"CLAMM_CHAIN_42161_RPC_URL": srv.URL, "CLAMM_INDEX_DIR": t.TempDir()})
	defer stop()
	code, body := fetch(t, base+"/readyz")
	if code == http.StatusOK && !strings.Contains(body, `"state":"synced"`) {
		t.Errorf("ready before the index reached the head: %s", body)
	}
	eventually.True(t, "the index to reach the head", func() bool {
		code, body := fetch(t, base+"/readyz")
		return code == http.StatusOK && strings.Contains(body, `"state":"synced"`)
	})
	// (the log is flushed every 200 ms)
	eventually.True(t, "the start to say the chain is indexed", func() bool {
		return strings.Contains(stderr.String(), `"chainId":42161,"mode":"indexed"`)
	})
	node.mu.Lock()
	from, addrs := node.filter["fromBlock"], fmt.Sprint(node.filter["address"])
	node.mu.Unlock()
	if from != fmt.Sprintf("0x%x", first) {
		t.Errorf("the first eth_getLogs starts at %v, the registry's first start block is %d", from, first)
	}
	for _, ds := range m.Sources {
		if ds.StartBlock <= head && !strings.Contains(strings.ToLower(addrs), strings.ToLower(ds.Address.Hex())) {
			t.Errorf("the first eth_getLogs does not ask for %s (%s): %s", ds.Name, ds.Address.Hex(), addrs)
		}
	}
	code, body = fetch(t, base+"/subgraphs/42161?query="+url.QueryEscape("{ _meta { block { number } hasIndexingErrors } }"))
	if want := fmt.Sprintf(`"number":%d`, head); code != http.StatusOK || !strings.Contains(body, want) || !strings.Contains(body, `"hasIndexingErrors":false`) {
		t.Errorf("query API: %d %s", code, body)
	}
}
