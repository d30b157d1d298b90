package mapping

//go:generate node testdata/modules/build.mjs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The host functions, each tested with a module built for it
// (testdata/modules: AssemblyScript compiled as graph build compiles a
// mapping, the .wasm committed beside its source), so that a host
// function that misbehaves fails a test of its own, not a test of what
// the subgraph's mappings write (subgraph/behaviour).

// modulesABI is the purpose-built modules' events, and the function the
// call module asks for (balanceOf, selector 0x70a08231).
const modulesABI = `[
 {"type":"event","name":"Thing","inputs":[{"name":"count","type":"uint256"},{"name":"amount","type":"int256"},{"name":"owner","type":"address"},{"name":"flag","type":"bool"}]},
 {"type":"event","name":"Pair","inputs":[{"name":"a","type":"int256"},{"name":"b","type":"int256"}]},
 {"type":"function","name":"balanceOf","inputs":[{"name":"owner","type":"address"}],"outputs":[{"name":"","type":"uint256"}]}
]`

var (
	moduleEmitter = common.HexToAddress("0x00000000000000000000000000000000000c0de1")
	moduleOwner   = common.HexToAddress("0xA11CE00000000000000000000000000000000001")
)

const moduleBlock = 77

// module is a purpose-built module on a store of testdata/modules/schema.graphql.
type module struct {
	t      *testing.T
	h      *Host
	store  *graphnode.Store
	events abi.ABI
}

// loadModule loads testdata/modules/<name>.wasm, its ethereum.calls
// answered by call with the ABI "Token" (modulesABI) listed.
func loadModule(t *testing.T, name string, call Call) *module {
	t.Helper()
	code, err := os.ReadFile(filepath.Join("testdata", "modules", name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	schema, err := os.ReadFile(filepath.Join("testdata", "modules", "schema.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := graphnode.ParseSchema(string(schema))
	if err != nil {
		t.Fatal(err)
	}
	events, err := abi.JSON(strings.NewReader(modulesABI))
	if err != nil {
		t.Fatal(err)
	}
	m := &module{t: t, store: graphnode.NewStore(s), events: events}
	m.h, err = New(context.Background(), name+".wasm", code, Memory(m.store), Options{Call: call, ABIs: map[string]abi.ABI{"Token": events}, Network: "testnet"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.h.Close)
	return m
}

// run logs event (its arguments in order, none indexed) from
// moduleEmitter at moduleBlock and runs handler on it.
func (m *module) run(handler, event string, args ...any) (Outcome, error) {
	m.t.Helper()
	ev := m.events.Events[event]
	data, err := ev.Inputs.Pack(args...)
	if err != nil {
		m.t.Fatal(err)
	}
	lg := types.Log{Address: moduleEmitter, Topics: []common.Hash{ev.ID}, Data: data}
	return m.h.Handle(context.Background(), Trigger{Handler: handler, Event: ev, Log: lg, Block: Block{Number: moduleBlock, Timestamp: 1_700_000_000}})
}

// thing runs handler on Thing(count, amount, moduleOwner, flag).
func (m *module) thing(handler string, count, amount *big.Int, flag bool) (Outcome, error) {
	return m.run(handler, "Thing", count, amount, moduleOwner, flag)
}

// show is a stored value as its kind and text, for comparing with what a
// test states.
func show(v Value) string {
	switch v.Kind {
	case KindString:
		return "String " + v.Str
	case KindInt:
		return fmt.Sprintf("Int %d", v.Int)
	case KindBigInt:
		return "BigInt " + v.Big.String()
	case KindBytes:
		return "Bytes 0x" + hex.EncodeToString(v.Bytes)
	case KindBool:
		return fmt.Sprintf("Boolean %t", v.Bool)
	case KindArray:
		var els []string
		for _, e := range v.Array {
			els = append(els, show(e))
		}
		return "[" + strings.Join(els, ", ") + "]"
	}
	return fmt.Sprintf("kind %d", v.Kind)
}

// wantEntity fails unless entity typ id holds exactly the fields want
// states (each as show prints it; id included).
func (m *module) wantEntity(typ, id string, want map[string]string) {
	m.t.Helper()
	e := m.store.Get(typ, id)
	if e == nil {
		m.t.Fatalf("no %s %s", typ, id)
	}
	got := map[string]string{}
	for k, v := range e {
		if v.Kind != KindNull {
			got[k] = show(v)
		}
	}
	for k, w := range want {
		if got[k] != w {
			m.t.Errorf("%s %s .%s = %q, want %q", typ, id, k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			m.t.Errorf("%s %s has .%s = %s, which it should not", typ, id, k, got[k])
		}
	}
}

// store.set writes every kind of value as the mapping made it; store.get
// reads back what was written, and null for an id never written;
// store.remove removes; a type outside the schema fails the handler.
func TestHostStoreFunctions(t *testing.T) {
	m := loadModule(t, "store", nil)
	amount, _ := new(big.Int).SetString("-12345678901234567890123", 10)
	if _, err := m.thing("handleSet", big.NewInt(5), amount, true); err != nil {
		t.Fatal(err)
	}
	owner := "Bytes 0x" + hex.EncodeToString(moduleOwner.Bytes())
	m.wantEntity("Thing", "a", map[string]string{"id": "String a", "name": "String thing €", "count": "Int 5",
		"amount": "BigInt -12345678901234567890123", "owner": owner, "flag": "Boolean true",
		"amounts": "[BigInt -12345678901234567890123, BigInt -1]"})

	if _, err := m.thing("handleGet", big.NewInt(0), big.NewInt(0), false); err != nil {
		t.Fatal(err)
	}
	m.wantEntity("Copy", "a", map[string]string{"id": "String a", "found": "Boolean true", "count": "Int 6", "name": "String thing €",
		"owner": owner, "amounts": "[BigInt -12345678901234567890123, BigInt -1]"})
	m.wantEntity("Copy", "missing", map[string]string{"id": "String missing", "found": "Boolean false"})

	if _, err := m.thing("handleRemove", big.NewInt(0), big.NewInt(0), false); err != nil {
		t.Fatal(err)
	}
	if e := m.store.Get("Thing", "a"); e != nil {
		t.Errorf("Thing a after store.remove: %v", e)
	}
	if _, err := m.thing("handleSetUnknown", big.NewInt(0), big.NewInt(0), false); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("store.set of a type outside the schema: %v", err)
	}
}

// BigInt arithmetic as Graph Node's (num-bigint's): exact at any size,
// division and remainder truncated toward zero, the remainder taking the
// dividend's sign; dividing by zero fails the handler. The values are
// stated, not computed here.
func TestHostBigIntFunctions(t *testing.T) {
	m := loadModule(t, "bigint", nil)
	for _, c := range []struct{ a, b, plus, minus, times, quotient, remainder string }{
		{"7", "2", "9", "5", "14", "3", "1"},
		{"-7", "2", "-5", "-9", "-14", "-3", "-1"},
		{"7", "-2", "5", "9", "-14", "-3", "1"},
		{"-7", "-2", "-9", "-5", "14", "3", "-1"},
		{"0", "5", "5", "-5", "0", "0", "0"},
		{"-128", "1", "-127", "-129", "-128", "-128", "0"},
		{"-1000000000000000000000007", "10", "-999999999999999999999997", "-1000000000000000000000017",
			"-10000000000000000000000070", "-100000000000000000000000", "-7"},
		{"1606938044258990275541962092341162602522202993782792835301377", "-18446744073709551616",
			"1606938044258990275541962092341162602522184547038719125749761",
			"1606938044258990275541962092341162602522221440526866544852993",
			"-29642774844752946028434172162224104410437116074403984394101159952769834897375232",
			"-87112285931760246646623899502532662132736", "1"},
	} {
		a, _ := new(big.Int).SetString(c.a, 10)
		b, _ := new(big.Int).SetString(c.b, 10)
		if _, err := m.run("handlePair", "Pair", a, b); err != nil {
			t.Fatalf("%s, %s: %v", c.a, c.b, err)
		}
		m.wantEntity("Sums", "r", map[string]string{"id": "String r", "plus": "BigInt " + c.plus, "minus": "BigInt " + c.minus,
			"times": "BigInt " + c.times, "quotient": "BigInt " + c.quotient, "remainder": "BigInt " + c.remainder})
	}
	if _, err := m.run("handlePair", "Pair", big.NewInt(1), big.NewInt(0)); err == nil || !strings.Contains(err.Error(), "divide BigInt by zero") {
		t.Errorf("division by zero: %v", err)
	}
}

// ethereum.call sends the function's selector and ABI-encoded arguments
// to the contract named, at the trigger's block, and gives the mapping the
// decoded answer; a revert (whatever data it returns), or an answer that does not decode as the
// function's outputs, is null; a node's failure is a NodeError (the block
// may be retried); a signature the ABI does not have, or an ABI the data
// source does not list, fails the handler.
func TestHostEthereumCall(t *testing.T) {
	balance, _ := new(big.Int).SetString("1000000000000000000000000000001", 10)
	word := common.LeftPadBytes(balance.Bytes(), 32)
	wantData := "0x70a08231000000000000000000000000" + strings.ToLower(moduleOwner.Hex()[2:])
	for _, c := range []struct {
		name, handler string
		ret           []byte
		reverted      bool
		nodeErr       error
		want          map[string]string // Answer a; nil: no Answer
		wantErr       string
	}{
		{name: "answer", handler: "handleBalance", ret: word, want: map[string]string{"id": "String a", "reverted": "Boolean false", "balance": "BigInt " + balance.String()}},
		{name: "revert", handler: "handleBalance", ret: word, reverted: true, want: map[string]string{"id": "String a", "reverted": "Boolean true"}},
		{name: "undecodable", handler: "handleBalance", ret: word[:5], want: map[string]string{"id": "String a", "reverted": "Boolean true"}},
		{name: "node error", handler: "handleBalance", nodeErr: errors.New("connection refused"), wantErr: "connection refused"},
		{name: "wrong signature", handler: "handleWrongSignature", ret: word, wantErr: "signature balanceOf(address):(uint128) does not match"},
		{name: "unlisted ABI", handler: "handleUnlistedABI", ret: word, wantErr: `Could not find ABI for contract "Unlisted"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var asked []string
			m := loadModule(t, "call", func(_ context.Context, to common.Address, data []byte, at Block) ([]byte, bool, error) {
				asked = append(asked, fmt.Sprintf("%s %s %d", to.Hex(), hexutil.Encode(data), at.Number))
				return c.ret, c.reverted, c.nodeErr
			})
			_, err := m.thing(c.handler, big.NewInt(0), big.NewInt(0), false)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want it to say %q", err, c.wantErr)
				}
				var ne *NodeError
				if errors.As(err, &ne) != (c.nodeErr != nil) {
					t.Errorf("err %v: a NodeError %t, want %t", err, errors.As(err, &ne), c.nodeErr != nil)
				}
				if e := m.store.Get("Answer", "a"); e != nil {
					t.Errorf("a failed handler wrote %v", e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("%s %s %d", moduleEmitter.Hex(), wantData, moduleBlock); !slices.Equal(asked, []string{want}) {
				t.Errorf("calls %v, want [%s]", asked, want)
			}
			m.wantEntity("Answer", "a", c.want)
		})
	}
}

// log.log receives each message at its level (graph-ts numbers them
// critical 0 to debug 4); a critical one fails the handler there, as
// Graph Node's log_log does: nothing after it runs.
func TestHostLog(t *testing.T) {
	m := loadModule(t, "log", nil)
	out, err := m.thing("handleLog", big.NewInt(0), big.NewInt(0), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Log{{4, "debug"}, {3, "info one of two"}, {2, "warning €"}, {1, "error"}}
	if !slices.Equal(out.Logs, want) {
		t.Errorf("logs %v, want %v", out.Logs, want)
	}
	out, err = m.thing("handleCritical", big.NewInt(0), big.NewInt(0), false)
	if err == nil || !strings.Contains(err.Error(), "critical") {
		t.Errorf("a critical log did not fail the handler: %v", err)
	}
	if want := []Log{{0, "critical"}}; !slices.Equal(out.Logs, want) {
		t.Errorf("logs %v, want %v: the handler went on after the critical log", out.Logs, want)
	}
}

// abort (a failed assertion, an error thrown) fails the handler with the
// message and the place in the source the module names (the line and
// column of the statement, read here from abort.ts), and the next
// trigger runs on a fresh instance.
func TestHostAbort(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "modules", "abort.ts"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(statement string) string {
		for n, l := range strings.Split(string(src), "\n") {
			if i := strings.Index(l, statement); i >= 0 {
				return fmt.Sprintf("abort.ts, line %d, column %d", n+1, i+1)
			}
		}
		t.Fatalf("abort.ts has no %q", statement)
		return ""
	}
	m := loadModule(t, "abort", nil)
	for handler, want := range map[string]string{
		"handleAssert": "mapping aborted at " + at("assert(") + ": the assertion",
		"handleThrow":  "mapping aborted at " + at("throw new Error") + ": thrown",
	} {
		for range 2 { // the second on the instance after the failure
			if _, err := m.thing(handler, big.NewInt(0), big.NewInt(0), false); err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Errorf("%s: err %v, want %q", handler, err, want)
			}
		}
	}
}

// The committed modules are what their sources build: modules.sum, which
// build.mjs writes, names each source's and each .wasm's sha256, and the
// tree's files must have them (CI rebuilds the modules and diffs, which
// also catches a build that no longer matches its sources).
func TestModulesBuiltFromSource(t *testing.T) {
	dir := filepath.Join("testdata", "modules")
	sums, err := os.ReadFile(filepath.Join(dir, "modules.sum"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, row := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, file, ok := strings.Cut(row, "  ")
		if !ok {
			t.Fatalf("modules.sum row %q", row)
		}
		listed[file] = true
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Errorf("%v: rebuild the modules (go generate ./internal/graphnode/mapping)", err)
			continue
		}
		if got := sha256.Sum256(raw); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s differs from what modules.sum names: rebuild the modules (go generate ./internal/graphnode/mapping) and commit them", file)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := e.Name(); (strings.HasSuffix(n, ".ts") || strings.HasSuffix(n, ".wasm")) && !listed[n] {
			t.Errorf("%s is not in modules.sum: rebuild the modules (go generate ./internal/graphnode/mapping)", n)
		}
	}
}
