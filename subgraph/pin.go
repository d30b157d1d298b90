package subgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
		ref, err := p.Wait(ctx)
		if err != nil {
			return p, false, err
		}
		at(ref.Number)
	}
	return p, false, nil
}

// resolvePin resolves a claimed pin from the answer's `_meta`, or fails it
// with the read's error. The block it resolves to is the subgraph's
// indexed head, read from a question asked at at: the client remembers it
// (Seen).
func (c *Client) resolvePin(p *block.Pin, out any, err error, at time.Time) {
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
	ref := m.meta().ref()
	c.seen.Saw(ref, at)
	p.Resolve(ref)
}

// answerMeta is an answer page's `_meta` with what its pin knows: a page
// asked by number carries no hash or time from Graph Node, and the pin
// (resolved by the header the client asked for, or by the head this or an
// earlier read saw) has them. A page at another block than the pin's (a
// document without $block) keeps its own: the gateway refuses the answer.
func answerMeta(ctx context.Context, m metaJSON) Meta {
	out := m.meta()
	p := block.From(ctx)
	if p == nil {
		return out
	}
	if r, ok := p.Resolved(); ok && r.Number == out.Block {
		out.Hash = r.Hash
		if r.Timestamp != 0 {
			out.Timestamp = r.Timestamp
		}
	}
	return out
}

// Seen is the subgraph's indexed head as this client last read it: by
// Meta (readiness probes), by an answer's first page that resolved its pin,
// by the strikes document's unpinned `head`.
func (c *Client) Seen() *block.Seen { return &c.seen }

// IndexedHead reads the subgraph's indexed head now (`_meta`). Its caller
// (package block's Pins) remembers what it reads itself.
func (c *Client) IndexedHead(ctx context.Context) (block.Ref, error) {
	m, err := c.meta(ctx)
	return m.ref(), err
}

// blockError names a GraphQL error about the pinned block (Graph Node's
// QueryExecutionError texts: not indexed yet, pruned, unknown hash) in the
// block codes; nil for any other error. Only the message's first 1 KiB is
// read: Graph Node's are short, and a hostile subgraph's 20 MB message
// must cost no more than a short one.
func blockError(msg string, err error) error {
	msg = strings.ToLower(msg[:min(len(msg), 1<<10)])
	const notIndexed = "has only indexed up to block number "
	if n, ok := numberAfter(msg, notIndexed); ok {
		return problem.Wrap(problem.BlockNotIndexed, err, "the subgraph has indexed up to block %s only", n)
	}
	// Graph Node's words for a block older than its history_blocks
	// keep (the embedded index's retention says the same)
	const notKept = "only has data starting at block number "
	if n, ok := numberAfter(msg, notKept); ok {
		return problem.Wrap(problem.BlockPruned, err, "the subgraph holds the state of block %s and later only (older history is pruned)", n)
	}
	if strings.Contains(msg, "before the earliest") || strings.Contains(msg, "pruned") {
		return problem.Wrap(problem.BlockPruned, err, "the subgraph no longer holds the block asked for (pruned)")
	}
	if strings.Contains(msg, "no block with that hash found") {
		return problem.Wrap(problem.BlockNotFound, err, "the subgraph knows no block with that hash")
	}
	return nil
}

// numberAfter is the block number (at most 20 digits) that follows
// phrase in msg, if msg holds it followed by a number.
func numberAfter(msg, phrase string) (string, bool) {
	i := strings.Index(msg, phrase)
	if i < 0 {
		return "", false
	}
	rest := msg[i+len(phrase):]
	n := 0
	for n < len(rest) && n < 20 && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	return rest[:n], n > 0
}

// sawHead remembers the indexed head a document asked for beside its
// pinned answer (`head: _meta`, at no block: the strikes document), read
// from a question asked at at. Nothing happens when the document has none.
func (c *Client) sawHead(raw json.RawMessage, at time.Time) {
	var h metaJSON
	if len(raw) > 0 && json.Unmarshal(raw, &h) == nil {
		c.seen.Saw(h.meta().ref(), at)
	}
}
