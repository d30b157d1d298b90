// Package hostedtypes holds the hosted API's response types as its
// clients declare them (the Stryke frontend's TypeScript types and zod
// schemas, the Dopex dapp's, the dashboards' parsers; transcribed in the
// shared spec hosted-api-clients.md), and a checker of a decoded JSON
// answer against one: field names, JSON types, which may be null, number
// against string. The contract tests of the hosted paths hold the
// gateway's answers to them on the demo (gateway/systemtest) and on the
// simulated EVM (internal/evmtest). Tests only: the served binary never
// links it.
package hostedtypes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
)

// Type is a JSON type as a client declares it.
type Type struct {
	kind     string // "number", "string", "boolean", "object", "array", "numeric" (a number or a numeric string)
	nullable bool
	fields   map[string]Type
	extra    []string // fields an object may carry beyond its declared ones
	elem     *Type
}

// The scalar types.
var (
	Number  = Type{kind: "number"}
	String  = Type{kind: "string"}
	Boolean = Type{kind: "boolean"}
	// Numeric is what a client passes through Number(...): a number or a
	// string that parses as one.
	Numeric = Type{kind: "numeric"}
)

// Object is an object of exactly these fields (and extra ones named by
// Allowing).
func Object(fields map[string]Type) Type { return Type{kind: "object", fields: fields} }

// ArrayOf is an array of elem.
func ArrayOf(elem Type) Type { return Type{kind: "array", elem: &elem} }

// Allowing lets an object carry the named fields beyond the client's
// type (the gateway's asOf envelope: a client ignores a field it does not
// declare).
func (t Type) Allowing(names ...string) Type {
	t.extra = append(slices.Clone(t.extra), names...)
	return t
}

// Nullable lets the value be null.
func (t Type) Nullable() Type { t.nullable = true; return t }

// Check decodes body (numbers kept as json.Number) and lists where it
// departs from t; nil when it conforms.
func Check(body []byte, t Type) []string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	var out []string
	check(v, t, "$", &out)
	return out
}

func check(v any, t Type, at string, out *[]string) {
	if v == nil {
		if !t.nullable {
			*out = append(*out, at+": null, the client's type is a non-null "+t.kind)
		}
		return
	}
	bad := func(got string) {
		*out = append(*out, fmt.Sprintf("%s: a %s, the client's type is %s", at, got, t.kind))
	}
	switch t.kind {
	case "number":
		if _, ok := v.(json.Number); !ok {
			bad(jsonKind(v))
		}
	case "numeric":
		switch x := v.(type) {
		case json.Number:
		case string:
			if _, err := strconv.ParseFloat(x, 64); err != nil {
				bad("non-numeric string")
			}
		default:
			bad(jsonKind(v))
		}
	case "string", "boolean":
		if jsonKind(v) != t.kind {
			bad(jsonKind(v))
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			bad(jsonKind(v))
			return
		}
		for i, e := range a {
			check(e, *t.elem, fmt.Sprintf("%s[%d]", at, i), out)
		}
	case "object":
		checkObject(v, t, at, out)
	}
}

func checkObject(v any, t Type, at string, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		*out = append(*out, fmt.Sprintf("%s: a %s, the client's type is an object", at, jsonKind(v)))
		return
	}
	names := make([]string, 0, len(t.fields))
	for n := range t.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fv, ok := m[n]
		if !ok {
			*out = append(*out, fmt.Sprintf("%s.%s: missing", at, n))
			continue
		}
		check(fv, t.fields[n], at+"."+n, out)
	}
	for n := range m {
		if _, declared := t.fields[n]; !declared && !slices.Contains(t.extra, n) {
			*out = append(*out, fmt.Sprintf("%s.%s: not in the client's type", at, n))
		}
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case json.Number:
		return "number"
	case string:
		return "string"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
