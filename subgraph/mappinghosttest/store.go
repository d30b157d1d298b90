package mappinghosttest

import (
	"fmt"
	"math/big"
	"os"
	"regexp"
	"sort"
	"strings"
)

// Kind is a store value's kind, numbered as Graph Node's StoreValueKind.
type Kind uint32

const (
	KindString Kind = iota
	KindInt
	KindBigDecimal
	KindBool
	KindArray
	KindNull
	KindBytes
	KindBigInt
	KindInt8
	KindTimestamp
)

// Value is one entity field as the mapping stored it.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Bool  bool
	Bytes []byte
	Big   *big.Int // BigInt, or a BigDecimal's digits
	Exp   *big.Int // a BigDecimal's decimal exponent
	Array []Value
}

// Entity is an entity's fields by name.
type Entity map[string]Value

// BigInt returns field name as a BigInt, failing if it is anything else.
func (e Entity) BigInt(name string) (*big.Int, error) {
	v, ok := e[name]
	if !ok || v.Kind != KindBigInt {
		return nil, fmt.Errorf("field %s is %v, not a BigInt", name, v.Kind)
	}
	return v.Big, nil
}

// field is one field of an entity type in the schema.
type field struct {
	name     string
	base     string // ID, String, Bytes, BigInt, Int, Boolean, an enum or an entity type
	list     bool
	required bool
}

type entityType struct {
	name      string
	immutable bool
	fields    map[string]field
}

// schema is what store.set checks an entity against, as Graph Node does:
// known type, required fields present and non-null, values of the field's
// type (entity references are their ids, enums strings).
type schema struct {
	types map[string]*entityType
	enums map[string]bool
}

var (
	typeRe  = regexp.MustCompile(`^type\s+(\w+)\s+@entity\(immutable:\s*(true|false)\)`)
	enumRe  = regexp.MustCompile(`^enum\s+(\w+)`)
	fieldRe = regexp.MustCompile(`^(\w+)\s*:\s*(\[?)\s*(\w+)!?\s*\]?(!?)\s*(@derivedFrom.*)?$`)
)

func loadSchema(path string) (*schema, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &schema{types: map[string]*entityType{}, enums: map[string]bool{}}
	var cur *entityType
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		switch {
		case line == "" || strings.HasPrefix(line, `"`):
		case typeRe.MatchString(line):
			m := typeRe.FindStringSubmatch(line)
			cur = &entityType{name: m[1], immutable: m[2] == "true", fields: map[string]field{}}
			s.types[m[1]] = cur
		case strings.HasPrefix(line, "type "):
			return nil, fmt.Errorf("schema: %q lacks @entity(immutable: ...)", line)
		case enumRe.MatchString(line):
			s.enums[enumRe.FindStringSubmatch(line)[1]] = true
			cur = nil
		case line == "}":
			cur = nil
		case cur != nil:
			m := fieldRe.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("schema: cannot read field %q of %s", line, cur.name)
			}
			if m[5] != "" {
				continue // derived: never stored
			}
			list := m[2] == "["
			required := m[4] == "!" || (!list && strings.HasSuffix(strings.TrimSpace(strings.SplitN(line, ":", 2)[1]), "!"))
			cur.fields[m[1]] = field{name: m[1], base: m[3], list: list, required: required}
		}
	}
	return s, nil
}

func (s *schema) kindOf(base string) Kind {
	switch base {
	case "Bytes":
		return KindBytes
	case "BigInt":
		return KindBigInt
	case "BigDecimal":
		return KindBigDecimal
	case "Int":
		return KindInt
	case "Int8":
		return KindInt8
	case "Boolean":
		return KindBool
	default: // ID, String, enums, entity references
		return KindString
	}
}

func (s *schema) check(typ, id string, e Entity) error {
	t, ok := s.types[typ]
	if !ok {
		return fmt.Errorf("entity type %s is not in the schema", typ)
	}
	names := make([]string, 0, len(t.fields))
	for n := range t.fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := t.fields[n]
		v, ok := e[n]
		if !ok || v.Kind == KindNull {
			if f.required {
				return fmt.Errorf("entity %s[%s]: missing value for non-nullable field `%s`", typ, id, n)
			}
			continue
		}
		want := s.kindOf(f.base)
		if f.list {
			if v.Kind != KindArray {
				return fmt.Errorf("entity %s[%s]: field `%s` is %v, not a list", typ, id, n, v.Kind)
			}
			for _, el := range v.Array {
				if el.Kind != want {
					return fmt.Errorf("entity %s[%s]: element of `%s` is %v, not %v", typ, id, n, el.Kind, want)
				}
			}
			continue
		}
		if v.Kind != want {
			return fmt.Errorf("entity %s[%s]: field `%s` is %v, not %v", typ, id, n, v.Kind, want)
		}
	}
	for n := range e {
		if _, ok := t.fields[n]; !ok {
			return fmt.Errorf("entity %s[%s]: unknown field `%s`", typ, id, n)
		}
	}
	if idv := e["id"]; idv.Str != id {
		return fmt.Errorf("value of %s attribute 'id' conflicts with ID passed to `store.set()`: %q != %q", typ, idv.Str, id)
	}
	return nil
}

func (k Kind) String() string {
	names := []string{"String", "Int", "BigDecimal", "Bool", "Array", "Null", "Bytes", "BigInt", "Int8", "Timestamp"}
	if int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", uint32(k))
}
