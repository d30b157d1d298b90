// Package graphnodetest puts the Graph Node emulator (internal/graphnode)
// behind the test doors the gateway's tests need: it counts requests,
// remembers each operation's last variables, and can be told to fail (an
// HTTP status or a GraphQL errors body) or to rewrite an answer (hostile
// bodies in Graph Node's framing). What it answers otherwise is the
// emulator's answer, so the tests meet Graph Node's semantics, not a
// per-document fake.
package graphnodetest

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Server is the emulator with test doors.
type Server struct {
	// Store holds the entities the emulator serves.
	Store *graphnode.Store
	// Fail, when set, is asked before each query; a non-nil answer is sent
	// instead of the data: an HTTP status (Status) or a GraphQL errors body.
	Fail func(operation string) *Failure
	// Rewrite, when set, is given each data answer as it would be sent and
	// sends what it returns instead: hostile answers (huge or negative
	// numbers, bodies of any size, fuzzed bytes) in Graph Node's framing.
	Rewrite func(operation string, body []byte) []byte

	requests atomic.Int64
	mu       sync.Mutex
	lastVars map[string]map[string]any
	byOp     map[string]int64
}

// Failure describes how to fail one request.
type Failure struct {
	Status int      // HTTP status; 0 means 200 with Errors
	Errors []string // GraphQL error messages
	// RetryAfter, if set, is sent as the Retry-After header.
	RetryAfter string
	// Body, if set, is the raw body sent with Status (an error page).
	Body string
}

// schema is derived once: it is read-only, and every test's fakes need it.
var schema = sync.OnceValues(func() (*graphnode.Schema, error) { return graphnode.ParseSchema(subgraph.Schema) })

// New returns a server over an empty store of the options subgraph's
// schema.
func New() *Server {
	s, err := schema()
	if err != nil {
		panic(err) // the embedded schema is checked by internal/graphnode's tests
	}
	return &Server{Store: graphnode.NewStore(s)}
}

// Requests counts queries received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Operations counts the queries the emulator answered (not those Fail
// answered) by operation name: a copy, so that a test can take one before
// a request and one after.
func (s *Server) Operations() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byOp)
}

// LastVariables returns the variables of the last query with that operation name.
func (s *Server) LastVariables(operation string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastVars[operation]
}

// ServeHTTP answers one GraphQL POST.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	body, _ := io.ReadAll(r.Body)
	var req struct {
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	_ = json.Unmarshal(body, &req)
	if s.Fail != nil {
		if f := s.Fail(req.OperationName); f != nil {
			fail(w, f)
			return
		}
	}
	s.mu.Lock()
	if s.lastVars == nil {
		s.lastVars, s.byOp = map[string]map[string]any{}, map[string]int64{}
	}
	s.lastVars[req.OperationName] = req.Variables
	s.byOp[req.OperationName]++
	s.mu.Unlock()
	out := (&graphnode.Server{Store: s.Store}).Answer(body)
	if s.Rewrite != nil {
		out = s.Rewrite(req.OperationName, out)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

func fail(w http.ResponseWriter, f *Failure) {
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.Status != 0 {
		w.WriteHeader(f.Status)
		_, _ = w.Write([]byte(f.Body))
		return
	}
	errs := make([]map[string]any, len(f.Errors))
	for i, m := range f.Errors {
		errs[i] = map[string]any{"message": m}
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(map[string]any{"errors": errs})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b.Bytes())
}
