package graphnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	validatorrules "github.com/vektah/gqlparser/v2/validator/rules"
)

// Graph Node's bounds on the collection arguments.
const (
	MaxFirst = 1000
	MaxSkip  = 5000
)

// Request is a GraphQL request as Graph Node reads it from a POST body.
type Request struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName,omitempty"`
}

// Error is one GraphQL error of an answer.
type Error struct {
	Message   string     `json:"message"`
	Locations []Location `json:"locations,omitempty"`
}

// Location is a line and column of the query text.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Response is Graph Node's answer: data, or errors and no data.
type Response struct {
	Data   *Object `json:"data,omitempty"`
	Errors []Error `json:"errors,omitempty"`
}

// Object is a JSON object whose keys keep the order of the selection, as
// Graph Node writes them.
type Object struct {
	keys []string
	vals []any
}

func (o *Object) set(k string, v any) {
	for i, key := range o.keys {
		if key == k {
			o.vals[i] = v
			return
		}
	}
	o.keys, o.vals = append(o.keys, k), append(o.vals, v)
}

// Get returns the value under k.
func (o *Object) Get(k string) any {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i]
		}
	}
	return nil
}

// MarshalJSON writes the keys in selection order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// queryError is an execution error with Graph Node's message.
type queryError struct {
	msg string
	loc *Location
}

func (e *queryError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &queryError{msg: fmt.Sprintf(format, args...)} }

// Query validates a request against the derived schema and executes it over
// the store.
func (s *Store) Query(req Request) Response { return s.QueryContext(context.Background(), req) }

// QueryContext is Query on ctx: the executor stops when ctx ends.
func (s *Store) QueryContext(ctx context.Context, req Request) Response {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return ExecuteContext(ctx, s.schema, memorySource{s}, req)
}

// Execute validates a request against the schema Graph Node derives and
// executes it over src, a consistent view of a store: the in-memory Store
// and the indexer's store on disk answer through the same executor.
func Execute(s *Schema, src Source, req Request) Response {
	return ExecuteContext(context.Background(), s, src, req)
}

// ExecuteContext is Execute on the request's context: the source's reads
// run on it, so a cancelled or timed-out query stops reading.
func ExecuteContext(ctx context.Context, s *Schema, src Source, req Request) (resp Response) {
	doc, op, vars, errs := s.prepare(req)
	if errs != nil {
		return Response{Errors: errs}
	}
	x := &exec{ctx: ctx, src: src, s: s, doc: doc, vars: vars, head: src.Head(), failed: src.Failed()}
	defer func() {
		// A store that cannot be read fails the query, as Graph Node
		// answers a database error: never a partial answer.
		if p := recover(); p != nil {
			sf, ok := p.(storeFailure)
			if !ok {
				panic(p)
			}
			resp = Response{Errors: []Error{{Message: "Store error: " + sf.err.Error()}}}
		}
	}()
	data, err := x.root(op)
	if err != nil {
		var qe *queryError
		if errors.As(err, &qe) && qe.loc != nil {
			return Response{Errors: []Error{{Message: qe.msg, Locations: []Location{*qe.loc}}}}
		}
		return Response{Errors: []Error{{Message: err.Error()}}}
	}
	return Response{Data: data}
}

// Validate parses and validates a query document against the derived
// schema, with Graph Node's messages where they differ from gqlparser's,
// and checks each operation against the schema's Limits (a `first` given
// by a variable counts as Graph Node's default, 100).
func (s *Schema) Validate(query string) []Error {
	doc, errs := s.parse(query, nil)
	if errs != nil {
		return errs
	}
	for _, op := range doc.Operations {
		if e := s.bounded(doc, op, nil); e != nil {
			return []Error{*e}
		}
	}
	return nil
}

// rules are gqlparser's validation rules but the overlapping-fields one,
// whose pairwise comparison is quadratic in a repeated field: mergeable
// checks the same in linear time, once Limits have bounded the document.
var rules = func() *validatorrules.Rules {
	r := validatorrules.NewDefaultRules()
	r.RemoveRule("OverlappingFieldsCanBeMerged")
	return r
}()

func (s *Schema) parse(query string, vars map[string]any) (*ast.QueryDocument, []Error) {
	doc, err := parser.ParseQuery(&ast.Source{Name: "query", Input: query})
	if err != nil {
		return nil, gqlErrors(err)
	}
	if list := validator.ValidateWithRules(s.API, doc, rules); len(list) > 0 {
		return nil, graphNodeErrors(doc, list, vars)
	}
	return doc, nil
}

// bounded checks op against the schema's Limits, then that its fields
// merge: the second walks the expanded document, which the first bounds.
func (s *Schema) bounded(doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) *Error {
	if e := s.Limits.check(doc, op, vars); e != nil {
		return e
	}
	return s.mergeable(doc, op)
}

func (s *Schema) prepare(req Request) (*ast.QueryDocument, *ast.OperationDefinition, map[string]any, []Error) {
	doc, errs := s.parse(req.Query, req.Variables)
	if errs != nil {
		return nil, nil, nil, errs
	}
	var op *ast.OperationDefinition
	switch {
	case req.OperationName != "":
		if op = doc.Operations.ForName(req.OperationName); op == nil {
			return nil, nil, nil, []Error{{Message: fmt.Sprintf("Operation name not found `%s`", req.OperationName)}}
		}
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	default:
		return nil, nil, nil, []Error{{Message: "Operation name required"}}
	}
	if op.Operation != ast.Query {
		return nil, nil, nil, []Error{{Message: fmt.Sprintf("Not supported: %s", op.Operation)}}
	}
	for _, v := range op.VariableDefinitions {
		if _, ok := req.Variables[v.Variable]; !ok && v.Type.NonNull && v.DefaultValue == nil {
			return nil, nil, nil, []Error{{Message: fmt.Sprintf("No value provided for required variable `%s`", v.Variable),
				Locations: []Location{{Line: v.Position.Line, Column: v.Position.Column}}}}
		}
	}
	vars, err := validator.VariableValues(s.API, op, req.Variables)
	if err != nil {
		return nil, nil, nil, gqlErrors(err)
	}
	if e := intVariablesFit(op, vars); e != nil {
		return nil, nil, nil, []Error{*e}
	}
	if e := s.bounded(doc, op, vars); e != nil {
		return nil, nil, nil, []Error{*e}
	}
	return doc, op, vars, nil
}

// intVariablesFit refuses an Int variable outside 32 bits, as GraphQL's
// Int is (gqlparser coerces any Go integer). Graph Node's own wording for
// this refusal is not reproduced; the gateway treats any GraphQL error
// alike, and what matters is that such a query fails here as it would
// there, not silently succeeds.
func intVariablesFit(op *ast.OperationDefinition, vars map[string]any) *Error {
	for _, v := range op.VariableDefinitions {
		if base := v.Type; base.Elem == nil && base.NamedType == "Int" {
			if n, ok := asInt64(vars[v.Variable]); ok && (n < math.MinInt32 || n > math.MaxInt32) {
				return &Error{Message: fmt.Sprintf("Int cannot represent non 32-bit signed integer value: %d (variable `%s`)", n, v.Variable),
					Locations: []Location{{Line: v.Position.Line, Column: v.Position.Column}}}
			}
		}
	}
	return nil
}

// asInt64 reads a coerced integer variable.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case float64:
		return int64(n), n == float64(int64(n))
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func gqlErrors(err error) []Error {
	var list gqlerror.List
	var one *gqlerror.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = gqlerror.List{one}
	default:
		return []Error{{Message: err.Error()}}
	}
	out := make([]Error, 0, len(list))
	for _, e := range list {
		out = append(out, fromGQL(e))
	}
	return out
}

func fromGQL(e *gqlerror.Error) Error {
	out := Error{Message: e.Message}
	for _, l := range e.Locations {
		out.Locations = append(out.Locations, Location{Line: l.Line, Column: l.Column})
	}
	return out
}

// unknownField is gqlparser's (graphql-js's) message for a field the type
// lacks.
var unknownField = regexp.MustCompile(`^Cannot query field "(\w+)" on type "(\w+)"`)

// graphNodeErrors turns gqlparser's validation errors into Graph Node's.
// gqlparser runs the graphql-js rules, the set Graph Node runs with
// ENABLE_GRAPHQL_VALIDATIONS; Graph Node's default (validations off) finds
// the same faults while executing and words two of them its own way, which
// is what a client of a default deployment reads: a field the type lacks
// ("Type `Strike` has no field `price`") and a value an argument's type does
// not admit, such as an unknown filter ("Invalid value provided for argument
// `where`: ...", the value printed as graph-node's Rust Debug prints it).
// Everything else keeps gqlparser's text.
func graphNodeErrors(doc *ast.QueryDocument, list gqlerror.List, vars map[string]any) []Error {
	out := make([]Error, 0, len(list))
	seen := map[*ast.Argument]bool{}
	for _, e := range list {
		if m := unknownField.FindStringSubmatch(e.Message); e.Rule == "FieldsOnCorrectType" && m != nil {
			ge := fromGQL(e)
			ge.Message = fmt.Sprintf("Type `%s` has no field `%s`", m[2], m[1])
			out = append(out, ge)
			continue
		}
		if e.Rule == "ValuesOfCorrectType" && len(e.Locations) > 0 {
			if _, a := argumentAt(doc, e.Locations[0].Line, e.Locations[0].Column); a != nil {
				if !seen[a] {
					seen[a] = true
					out = append(out, Error{
						Message: fmt.Sprintf("Invalid value provided for argument `%s`: %s", a.Name, debugValue(a.Value, vars)),
						// Graph Node locates the error at the argument's
						// definition, which its derived schema places at 0:0.
						Locations: []Location{{Line: 0, Column: 0}},
					})
				}
				continue
			}
		}
		out = append(out, fromGQL(e))
	}
	return out
}

// argumentAt finds the argument whose value holds the position.
func argumentAt(doc *ast.QueryDocument, line, col int) (*ast.Field, *ast.Argument) {
	var found *ast.Argument
	var field *ast.Field
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				for _, a := range sel.Arguments {
					if found == nil && valueAt(a.Value, line, col) {
						found, field = a, sel
					}
				}
				walk(sel.SelectionSet)
			case *ast.InlineFragment:
				walk(sel.SelectionSet)
			}
		}
	}
	for _, op := range doc.Operations {
		walk(op.SelectionSet)
	}
	for _, fr := range doc.Fragments {
		walk(fr.SelectionSet)
	}
	return field, found
}

func valueAt(v *ast.Value, line, col int) bool {
	if v == nil {
		return false
	}
	if v.Position != nil && v.Position.Line == line && v.Position.Column == col {
		return true
	}
	for _, c := range v.Children {
		if c.Position != nil && c.Position.Line == line && c.Position.Column == col {
			return true
		}
		if valueAt(c.Value, line, col) {
			return true
		}
	}
	return false
}

// debugValue prints a value as graph-node prints the graphql-parser value
// of an InvalidArgumentError (Rust's Debug): Object({"k": String("v")})
// with sorted keys, Int(Number(5)), List([...]).
func debugValue(v *ast.Value, vars map[string]any) string {
	switch v.Kind {
	case ast.Variable:
		return debugJSON(vars[v.Raw])
	case ast.IntValue:
		return "Int(Number(" + v.Raw + "))"
	case ast.FloatValue:
		return "Float(" + v.Raw + ")"
	case ast.StringValue, ast.BlockValue:
		return fmt.Sprintf("String(%q)", v.Raw)
	case ast.EnumValue:
		return fmt.Sprintf("Enum(%q)", v.Raw)
	case ast.BooleanValue:
		return "Boolean(" + v.Raw + ")"
	case ast.NullValue:
		return "Null"
	case ast.ListValue:
		parts := make([]string, len(v.Children))
		for i, c := range v.Children {
			parts[i] = debugValue(c.Value, vars)
		}
		return "List([" + strings.Join(parts, ", ") + "])"
	}
	children := append(ast.ChildValueList{}, v.Children...)
	sort.Slice(children, func(i, j int) bool { return children[i].Name < children[j].Name })
	parts := make([]string, len(children))
	for i, c := range children {
		parts[i] = fmt.Sprintf("%q: %s", c.Name, debugValue(c.Value, vars))
	}
	return "Object({" + strings.Join(parts, ", ") + "})"
}

func debugJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "Null"
	case string:
		return fmt.Sprintf("String(%q)", v)
	case bool:
		return fmt.Sprintf("Boolean(%t)", v)
	case float64:
		if v == float64(int64(v)) {
			return fmt.Sprintf("Int(Number(%d))", int64(v))
		}
		return fmt.Sprintf("Float(%v)", v)
	case json.Number:
		return "Int(Number(" + v.String() + "))"
	case int64, int:
		return fmt.Sprintf("Int(Number(%d))", v)
	case []any:
		parts := make([]string, len(v))
		for i, el := range v {
			parts[i] = debugJSON(el)
		}
		return "List([" + strings.Join(parts, ", ") + "])"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%q: %s", k, debugJSON(v[k]))
		}
		return "Object({" + strings.Join(parts, ", ") + "})"
	}
	return fmt.Sprint(v)
}
