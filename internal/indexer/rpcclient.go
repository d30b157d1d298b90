package indexer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// NodeClient is the JSON-RPC client the indexer calls its node with:
// DialNode's *Client, or go-ethereum's *rpc.Client (a test's own).
type NodeClient interface {
	CallContext(ctx context.Context, result any, method string, args ...any) error
	BatchCallContext(ctx context.Context, b []rpc.BatchElem) error
	Close()
}

// Client is a JSON-RPC 2.0 client over HTTP with go-ethereum's rpc.Client
// semantics for CallContext and BatchCallContext (the same requests, the
// same error values: rpc.HTTPError for a status not 2xx, an rpc.Error for
// an error object, rpc.ErrNoResult, rpc.ErrMissingBatchResponse), built
// for the backfill's volume: each answer is read once into a pooled
// buffer and decoded in place (rpcdecode.go) rather than scanned into
// raw messages and decoded again through encoding/json. Where go-ethereum
// would fail on a well-formed answer it is kinder in two ways, both
// written down here: an "error": null member is no error, and a batch
// answered with a single error object (a node refusing batches, or
// throttled) fails with that error, not a decoding one.
type Client struct {
	url string
	hc  *http.Client
	ids atomic.Uint64
}

// NewClient is a client of the node at endpoint over hc (nil: a new
// http.Client). A URL's user and password are sent as basic
// authentication, as net/http sends them.
func NewClient(endpoint string, hc *http.Client) (*Client, error) {
	if u, err := url.Parse(endpoint); err != nil || u.Scheme != "http" && u.Scheme != "https" {
		// the error would quote the URL, which may hold a key
		return nil, errors.New("the node's URL is not an http(s) URL")
	}
	if hc == nil {
		hc = new(http.Client)
	}
	return &Client{url: endpoint, hc: hc}, nil
}

// Close releases the client's idle connections: those of hc's transport
// when it has a pool (DialNode's wrappers pass the call on to theirs).
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// bufs are request and answer buffers: nothing decoded refers to them.
var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer {
	b := bufs.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuf(b *bytes.Buffer) {
	if b.Cap() <= 4<<20 { // an outsized answer's buffer is let go
		bufs.Put(b)
	}
}

// CallContext calls method with args and decodes its result into result
// (a pointer, or nil to drop it).
func (c *Client) CallContext(ctx context.Context, result any, method string, args ...any) error {
	if result != nil && reflect.TypeOf(result).Kind() != reflect.Pointer {
		return fmt.Errorf("call result parameter must be pointer or nil interface: %v", result)
	}
	req := getBuf()
	defer putBuf(req)
	if err := appendCall(req, c.ids.Add(1), method, args); err != nil {
		return err
	}
	ans := getBuf()
	defer putBuf(ans)
	if err := c.post(ctx, req.Bytes(), ans); err != nil {
		return err
	}
	s := &jscan{b: ans.Bytes()}
	var m message
	if err := s.message(&m, func([]byte) any { return result }); err != nil {
		return err // a malformed answer writes no result
	}
	return m.decode(result)
}

// BatchCallContext sends b as one batch request and sets each element's
// Result or Error from the answer with its id (answers may come in any
// order); an error is returned only when the exchange itself failed.
func (c *Client) BatchCallContext(ctx context.Context, b []rpc.BatchElem) error {
	if len(b) == 0 {
		return errors.New("empty batch")
	}
	first := c.ids.Add(uint64(len(b))) - uint64(len(b)) + 1
	req := getBuf()
	defer putBuf(req)
	req.WriteByte('[')
	for i, e := range b {
		if i > 0 {
			req.WriteByte(',')
		}
		if err := appendCall(req, first+uint64(i), e.Method, e.Args); err != nil {
			return err
		}
	}
	req.WriteByte(']')
	ans := getBuf()
	defer putBuf(ans)
	if err := c.post(ctx, req.Bytes(), ans); err != nil {
		return err
	}
	ms, err := batchAnswer(ans.Bytes(), first, b)
	if err != nil {
		return err
	}
	for i := range b {
		if ms[i] == nil {
			b[i].Error = rpc.ErrMissingBatchResponse
			continue
		}
		b[i].Error = ms[i].decode(b[i].Result)
	}
	return nil
}

// post sends body and reads the answer into ans; a status not 2xx is an
// rpc.HTTPError carrying the body, as go-ethereum's client returns it.
func (c *Client) post(ctx context.Context, body []byte, ans *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.ContentLength > 0 && resp.ContentLength < 64<<20 {
		ans.Grow(int(resp.ContentLength) + bytes.MinRead)
	}
	_, err = ans.ReadFrom(resp.Body)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return rpc.HTTPError{Status: resp.Status, StatusCode: resp.StatusCode, Body: bytes.Clone(ans.Bytes())}
	}
	return err
}

// message is one answer of a call: its id, and its result or error
// (result nil: no result member). A result read after its id is decoded
// in the pass that reads the answer, into a fresh value of its call's
// type (val; valErr: how it went), never into the caller's target: the
// message's id may still change (a second id member) or an error object
// follow, and only decode, once the message is taken for a call, gives
// the caller a value. Any other result is kept raw and decoded then.
type message struct {
	id     []byte
	result []byte
	err    *nodeError
	val    any
	valErr error
}

// decode gives out the message's result, as go-ethereum's client does:
// the error object first, no result member an rpc.ErrNoResult, a nil
// out no decoding. out is written only when its result decodes: on an
// error the caller's value is left as it was (go-ethereum writes no
// result on an error object; a result it cannot decode it may write in
// part, which the indexer never reads).
func (m *message) decode(out any) error {
	switch {
	case m.err != nil:
		return m.err
	case m.result == nil:
		return rpc.ErrNoResult
	case out == nil:
		return nil
	}
	if m.val != nil && reflect.TypeOf(m.val) == reflect.TypeOf(out) && targetOf(out) != nil {
		if m.valErr != nil {
			return m.valErr
		}
		assign(out, m.val)
		return nil
	}
	return decodeResult(m.result, out)
}

// nodeError is a JSON-RPC error object; it satisfies rpc.Error and
// rpc.DataError, and reads as go-ethereum's does.
type nodeError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *nodeError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("json-rpc error %d", e.Code)
	}
	return e.Message
}

func (e *nodeError) ErrorCode() int { return e.Code }

func (e *nodeError) ErrorData() any { return e.Data }

var messageFields = []string{"id", "result", "error"}

// message reads an answer object into m; target, if set, is where the
// result of the call with an id goes (nil: nowhere known). An error
// object is decoded as go-ethereum decodes it: leniently (an error that
// is not an object is an error with code 0); "error": null is none.
func (s *jscan) message(m *message, target func(id []byte) any) error {
	return s.members(func(key []byte) error {
		k := field(key, messageFields)
		if k == 1 {
			return s.result(m, target)
		}
		v, err := s.span()
		if err != nil {
			return err
		}
		switch k {
		case 0:
			m.id = v
		case 2:
			m.err = nil
			if string(v) != "null" {
				m.err = new(nodeError)
				_ = json.Unmarshal(v, m.err) // lenient, as go-ethereum's decodeError
			}
		}
		return nil
	})
}

// result reads a message's result (a result given twice is the last):
// when the id came first and a fast decoder serves its call's target, it
// is decoded into a fresh value of that type (a malformed result's error
// kept, the answer read on); else it is kept raw.
func (s *jscan) result(m *message, target func(id []byte) any) error {
	s.ws()
	start, depth := s.i, s.depth
	m.val, m.valErr = nil, nil
	if target != nil {
		if v := fresh(targetOf(target(m.id))); v != nil {
			_, err := s.value(v)
			if err != nil {
				s.i, s.depth = start, depth
				if err := s.skip(); err != nil {
					return err
				}
			}
			m.result, m.val, m.valErr = s.b[start:s.i], v, err
			return nil
		}
	}
	v, err := s.span()
	m.result = v
	return err
}

// targetOf is out when it is a non-nil pointer, else nil.
func targetOf(out any) any {
	if v := reflect.ValueOf(out); out == nil || v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	return out
}

// batchAnswer reads a batch's answer into the messages of the calls b
// asked (ids first..first+len(b)-1), by index (nil: not answered).
// Null elements and answers to no call asked are ignored, a second
// answer to a call too; a batch answered with one error object fails
// with it.
func batchAnswer(body []byte, first uint64, b []rpc.BatchElem) ([]*message, error) {
	s := &jscan{b: body}
	n := len(b)
	out := make([]*message, n)
	if s.ws() == '{' {
		var m message
		if err := s.message(&m, nil); err != nil {
			return nil, err
		}
		if m.err != nil {
			return nil, m.err
		}
		return nil, errors.New("the node answered a batch with a single answer, not an array")
	}
	ms := make([]message, n)
	target := func(id []byte) any {
		if k, ok := idIndex(id, first, n); ok && out[k] == nil {
			return b[k].Result
		}
		return nil
	}
	err := s.elems(func() error {
		if null, err := s.null(); null || err != nil {
			return err
		}
		var m message
		if err := s.message(&m, target); err != nil {
			return err
		}
		if k, ok := idIndex(m.id, first, n); ok && out[k] == nil {
			ms[k] = m
			out[k] = &ms[k]
		}
		return nil
	})
	if err != nil {
		// a malformed answer writes no result, as go-ethereum's client
		// decodes none (nothing was written: results wait in messages)
		return nil, err
	}
	return out, nil
}

// idIndex is the index of the call whose id (first+index, written in
// decimal) raw is, as go-ethereum matches ids: by their JSON text.
func idIndex(raw []byte, first uint64, n int) (int, bool) {
	if len(raw) == 0 || len(raw) > 20 || raw[0] == '0' {
		return 0, false
	}
	id, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || id < first || id-first >= uint64(n) {
		return 0, false
	}
	return int(id - first), true
}

// appendCall writes one call as go-ethereum writes it:
// {"jsonrpc":"2.0","id":N,"method":M,"params":[...]} (no params member
// when args is nil).
func appendCall(w *bytes.Buffer, id uint64, method string, args []any) error {
	w.WriteString(`{"jsonrpc":"2.0","id":`)
	w.Write(strconv.AppendUint(w.AvailableBuffer(), id, 10))
	w.WriteString(`,"method":`)
	if err := appendJSON(w, method); err != nil {
		return err
	}
	if args != nil {
		w.WriteString(`,"params":[`)
		for i, a := range args {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := appendJSON(w, a); err != nil {
				return err
			}
		}
		w.WriteByte(']')
	}
	w.WriteByte('}')
	return nil
}

// appendJSON writes v as encoding/json.Marshal does, by hand for the
// parameters the indexer sends (hex values, filters, strings), through
// encoding/json for any other.
func appendJSON(w *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case string:
		if plain(v) {
			w.WriteByte('"')
			w.WriteString(v)
			w.WriteByte('"')
			return nil
		}
	case bool:
		w.WriteString(strconv.FormatBool(v))
		return nil
	case common.Hash:
		appendHex(w, v[:])
		return nil
	case *common.Hash:
		if v != nil {
			appendHex(w, v[:])
			return nil
		}
	case common.Address:
		appendHex(w, v[:])
		return nil
	case hexutil.Bytes:
		if v != nil {
			appendHex(w, v)
			return nil
		}
	case map[string]any:
		if v != nil {
			return appendMap(w, v)
		}
	case []any:
		return appendList(w, v == nil, len(v), func(i int) any { return v[i] })
	case []common.Address:
		return appendList(w, v == nil, len(v), func(i int) any { return v[i] })
	case []common.Hash:
		return appendList(w, v == nil, len(v), func(i int) any { return v[i] })
	}
	raw, err := json.Marshal(v)
	w.Write(raw)
	return err
}

// plain reports a string encoding/json writes as it is.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

func appendHex(w *bytes.Buffer, b []byte) {
	const digits = "0123456789abcdef"
	w.WriteString(`"0x`)
	for _, c := range b {
		w.WriteByte(digits[c>>4])
		w.WriteByte(digits[c&15])
	}
	w.WriteByte('"')
}

// appendMap writes a map with its keys sorted, as encoding/json does.
func appendMap(w *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			w.WriteByte(',')
		}
		if err := appendJSON(w, k); err != nil {
			return err
		}
		w.WriteByte(':')
		if err := appendJSON(w, m[k]); err != nil {
			return err
		}
	}
	w.WriteByte('}')
	return nil
}

// appendList writes a slice of n elements (null when nil, as
// encoding/json writes a nil slice).
func appendList(w *bytes.Buffer, isNil bool, n int, at func(int) any) error {
	if isNil {
		w.WriteString("null")
		return nil
	}
	w.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			w.WriteByte(',')
		}
		if err := appendJSON(w, at(i)); err != nil {
			return err
		}
	}
	w.WriteByte(']')
	return nil
}

// compile-time: both clients serve the node.
var (
	_ NodeClient = (*Client)(nil)
	_ NodeClient = (*rpc.Client)(nil)
)
