package subgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// pinVar sets the document's $block variable from ctx's pin (package
// block): the block the client asked for, or the one the answer's first
// read resolved, as `{ number: N }`. The first page of an answer whose
// block is not known yet goes unpinned (null: the indexed head) and
// claims the pin: its `_meta`, read in the same document, resolves it, so
// learning the block costs no round trip of its own. A document without
// $block (a replacement that predates pinning) is read at the head, and
// still resolves a pin it claims (the gateway then refuses an answer
// whose subgraph half is at another block than its own).
func pinVar(ctx context.Context, doc queries.Document, vars map[string]any) (*block.Pin, bool, error) {
	p := block.From(ctx)
	if p == nil {
		return nil, false, nil
	}
	at := func(n uint64) {
		if strings.Contains(doc.Text, "$block") {
			vars["block"] = map[string]any{"number": n}
		}
	}
	switch ref, ok := p.Resolved(); {
	case p.Want != 0:
		at(p.Want)
	case ok:
		at(ref.Number)
	case p.Claim(block.Subgraph):
		return p, true, nil // null: the indexed head
	default:
		ref, err := p.Wait()
		if err != nil {
			return p, false, err
		}
		at(ref.Number)
	}
	return p, false, nil
}

// resolvePin resolves a claimed pin from the answer's `_meta`, or fails it
// with the read's error.
func resolvePin(p *block.Pin, out any, err error) {
	if err != nil {
		p.Fail(err)
		return
	}
	raw, ok := out.(*map[string]json.RawMessage)
	if !ok {
		p.Fail(fmt.Errorf("subgraph: a pinned document's answer has no _meta"))
		return
	}
	var m metaJSON
	if err := json.Unmarshal((*raw)["_meta"], &m); err != nil || m.Block.Number == 0 {
		p.Fail(garbage(fmt.Errorf("_meta: %v", err)))
		return
	}
	meta := m.meta()
	p.Resolve(block.Ref{Number: meta.Block, Hash: meta.Hash, Timestamp: meta.Timestamp})
}

// blockError names a GraphQL error about the pinned block (Graph Node's
// QueryExecutionError texts: not indexed yet, pruned, unknown hash) in the
// block codes; nil for any other error. Only the message's first 1 KiB is
// read: Graph Node's are short, and a hostile subgraph's 20 MB message
// must cost no more than a short one.
func blockError(msg string, err error) error {
	msg = strings.ToLower(msg[:min(len(msg), 1<<10)])
	const notIndexed = "has only indexed up to block number "
	if i := strings.Index(msg, notIndexed); i >= 0 {
		rest := msg[i+len(notIndexed):]
		n := 0
		for n < len(rest) && n < 20 && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		return problem.Wrap(problem.BlockNotIndexed, err, "the subgraph has indexed up to block %s only", rest[:n])
	}
	if strings.Contains(msg, "before the earliest") || strings.Contains(msg, "pruned") {
		return problem.Wrap(problem.BlockPruned, err, "the subgraph no longer holds the block asked for (pruned)")
	}
	if strings.Contains(msg, "no block with that hash found") {
		return problem.Wrap(problem.BlockNotFound, err, "the subgraph knows no block with that hash")
	}
	return nil
}
