package graphnode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
)

// Block is a block the store has indexed.
type Block struct {
	Number     uint64 `json:"number"`
	Hash       string `json:"hash,omitempty"` // 0x-hex, lowercase
	Timestamp  uint64 `json:"timestamp"`
	ParentHash string `json:"parentHash,omitempty"`
}

// Store is a versioned entity store, written the way a mapping's
// store.set and store.remove write Graph Node's: each write makes a new
// version of the entity at the block being indexed (a later write in the
// same block replaces it), so a query can read the state as of any block.
// The head is the last block indexed: what `_meta` names and what a query
// without `block` reads.
type Store struct {
	schema *Schema

	mu       sync.RWMutex
	entities map[string]*heldType // by type: every version, as bytes
	blocks   []Block              // indexed blocks with their hash and time, ascending
	head     Block
	errors   bool
}

// NewStore returns an empty store of the schema's entities.
func NewStore(s *Schema) *Store {
	return &Store{schema: s, entities: map[string]*heldType{}}
}

// Schema is the schema the store checks entities against.
func (s *Store) Schema() *Schema { return s.schema }

// Head is the last block indexed.
func (s *Store) Head() Block {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.head
}

// SetHead records that the store has indexed up to b (the indexer calls
// it after each block). Moving the head back makes queries read the state
// as of that block, as a subgraph that lags would answer.
func (s *Store) SetHead(b Block) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.head = b
	if n := len(s.blocks); n == 0 || s.blocks[n-1].Number < b.Number {
		s.blocks = append(s.blocks, b)
	}
}

// SetIndexingErrors sets what `_meta { hasIndexingErrors }` says; with it
// set, a query under the default error policy (deny) fails with
// Graph Node's `indexing_error`.
func (s *Store) SetIndexingErrors(v bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = v
}

func (s *Store) indexingErrors() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.errors
}

// block returns the indexed block numbered n, if recorded.
func (s *Store) block(n uint64) (Block, bool) {
	i := sort.Search(len(s.blocks), func(i int) bool { return s.blocks[i].Number >= n })
	if i < len(s.blocks) && s.blocks[i].Number == n {
		return s.blocks[i], true
	}
	return Block{Number: n}, false
}

func (s *Store) blockByHash(h string) (Block, bool) {
	for _, b := range s.blocks {
		if b.Hash == h {
			return b, true
		}
	}
	return Block{}, false
}

// Get returns a copy of an entity as of the head (nil if absent or
// removed). It is At as of the head: for tests and tools that read a
// store they wrote; a reader that writes back what it finds uses Read.
func (s *Store) Get(typ, id string) Entity {
	return s.At(typ, id, ^uint64(0))
}

// At returns a copy of an entity as of block n (nil if absent or removed,
// and also if the store could not decode it, which its own encoding never
// causes). A reader that must tell a damaged store from an absent entity
// uses ReadAt.
func (s *Store) At(typ, id string, n uint64) Entity {
	e, _ := s.ReadAt(typ, id, n)
	return e
}

// Read is Get with the store's failure: an entity the store cannot decode
// is an error, not absent. A mapping's store.get reads with it (through
// mapping.Memory), so a damaged version fails the handler rather than
// reading as absent and being created anew over it.
func (s *Store) Read(typ, id string) (Entity, error) {
	return s.ReadAt(typ, id, ^uint64(0))
}

// ReadAt is At with the store's failure (see Read).
func (s *Store) ReadAt(typ, id string, n uint64) (Entity, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, err := s.at(typ, id, n)
	if err != nil {
		return nil, fmt.Errorf("%s[%s]: %w", typ, id, err)
	}
	return e, nil
}

// at is a new copy of an entity as of block n. The caller holds a lock.
func (s *Store) at(typ, id string, n uint64) (Entity, error) {
	h := s.entities[typ]
	if h == nil {
		return nil, nil
	}
	e, _, err := h.at(id, n)
	return e, err
}

// All returns the ids of the entities of a type that exist now, sorted.
func (s *Store) All(typ string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	h := s.entities[typ]
	if h == nil {
		return []string{}
	}
	ids := make([]string, 0, len(h.ids))
	for _, en := range h.ids {
		if i := h.version(en, ^uint64(0)); i >= 0 && !h.versions[i].removed {
			ids = append(ids, string(h.bytes(en.id)))
		}
	}
	sort.Strings(ids)
	return ids
}

// Row is an entity as of a block, with the block of that version.
type Row struct {
	ID      string
	Entity  Entity
	Changed uint64
}

// rows returns the entities of a type as of block n, by id, decoded anew.
// The caller holds the read lock.
func (s *Store) rows(typ string, n uint64) ([]Row, error) {
	h := s.entities[typ]
	if h == nil {
		return []Row{}, nil
	}
	out := make([]Row, 0, len(h.ids))
	for _, en := range h.ids {
		e, changed, err := h.decodeVersion(h.version(en, n))
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, Row{ID: string(h.bytes(en.id)), Entity: e, Changed: changed})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Set merges data into the entity (fields set to null are removed) as of
// block, then checks the result against the schema, as Graph Node's
// store.set does. An immutable entity can be written again only in the
// block that inserted it: Graph Node inserts it at the block's end, and a
// later insert violates the table's constraint.
func (s *Store) Set(typ, id string, data Entity, block uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur Entity
	var inserted uint64
	if h := s.entities[typ]; h != nil {
		inserted, _ = h.inserted(id)
		var err error
		if cur, _, err = h.at(id, ^uint64(0)); err != nil {
			return err
		}
	}
	merged, err := s.schema.Apply(Write{Type: typ, ID: id, Data: data, Block: block}, cur, inserted)
	if err != nil {
		return err
	}
	return s.put(typ, id, merged, block)
}

// Write is one store.set: the entity's type and id, the fields written and
// the block being indexed.
type Write struct {
	Type, ID string
	Data     Entity
	Block    uint64
	// Owned: the caller gives Data away (a mapping's store.set, read
	// anew from its memory), so Apply may return it as the new version
	// rather than a copy.
	Owned bool
}

// covers reports whether data sets every field cur has and sets none to
// null.
func covers(data, cur Entity) bool {
	for _, v := range data {
		if v.Kind == KindNull {
			return false
		}
	}
	for k := range cur {
		if _, ok := data[k]; !ok {
			return false
		}
	}
	return true
}

// Apply is Graph Node's store.set of w over cur, the entity as it is (nil
// if absent; inserted is the block of its first version): w's fields
// merged over cur's (a field set to null removed), the result checked
// against the schema. An immutable entity can be written again only in the
// block that inserted it: Graph Node inserts it at the block's end, and a
// later insert violates the table's constraint.
func (s *Schema) Apply(w Write, cur Entity, inserted uint64) (Entity, error) {
	typ, id, data, block := w.Type, w.ID, w.Data, w.Block
	t := s.Types[typ]
	if t == nil {
		return nil, fmt.Errorf("entity type %s is not in the schema", typ)
	}
	if t.Immutable && cur != nil && inserted != block {
		return nil, fmt.Errorf("immutable entity %s[%s] was inserted in block %d and cannot change in block %d", typ, id, inserted, block)
	}
	if w.Owned && covers(data, cur) {
		// the write names every field the entity has (graph-ts saves
		// an entity whole) and removes none: it is the new version
		if err := s.check(t, id, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	merged := make(Entity, max(len(cur), len(data)))
	for k, v := range cur {
		merged[k] = v
	}
	for k, v := range data {
		if v.Kind == KindNull {
			delete(merged, k)
			continue
		}
		merged[k] = v
	}
	if err := s.check(t, id, merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// CanRemove is Graph Node's check of a store.remove: the type exists and
// is mutable.
func (s *Schema) CanRemove(typ, id string) error {
	t := s.Types[typ]
	if t == nil {
		return fmt.Errorf("entity type %s is not in the schema", typ)
	}
	if t.Immutable {
		return fmt.Errorf("immutable entity %s[%s] cannot be removed", typ, id)
	}
	return nil
}

// EncodeEntity is an entity in Graph Node's JSON serialisation (the form
// of the store recordings), for a store that keeps entities as bytes.
func EncodeEntity(e Entity) ([]byte, error) {
	out := make(map[string]any, len(e))
	for k, v := range e {
		out[k] = v.JSON()
	}
	return json.Marshal(out)
}

// DecodeEntity reads what EncodeEntity wrote for an entity of typ.
func (s *Schema) DecodeEntity(typ string, raw []byte) (Entity, error) {
	t := s.Types[typ]
	if t == nil {
		return nil, fmt.Errorf("entity type %s is not in the schema", typ)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return s.entityFromJSON(t, m)
}

// Remove deletes the entity as of block.
func (s *Store) Remove(typ, id string, block uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.schema.CanRemove(typ, id); err != nil {
		return err
	}
	if cur, err := s.at(typ, id, ^uint64(0)); err != nil || cur == nil {
		return err
	}
	return s.put(typ, id, nil, block)
}

// put records e (nil: removed) as the entity's version at block; a later
// write in the block of its newest version replaces that version.
func (s *Store) put(typ, id string, e Entity, block uint64) error {
	h := s.entities[typ]
	if h == nil {
		t := s.schema.Types[typ]
		if t == nil {
			return fmt.Errorf("entity type %s is not in the schema", typ)
		}
		h = newHeldType(t)
		s.entities[typ] = h
	}
	return h.put(id, e, block)
}

// check is Graph Node's check of an entity against its type: required
// fields present and non-null, values of the field's kind (references are
// ids, enums strings and one of the enum's values), no unknown field.
func (s *Schema) check(t *EntityType, id string, e Entity) error {
	for _, f := range t.Fields {
		if f.DerivedFrom != "" {
			if _, ok := e[f.Name]; ok {
				return fmt.Errorf("entity %s[%s]: derived field `%s` cannot be set", t.Name, id, f.Name)
			}
			continue
		}
		v, ok := e[f.Name]
		if !ok || v.Kind == KindNull {
			if f.NonNull {
				return fmt.Errorf("entity %s[%s]: missing value for non-nullable field `%s`", t.Name, id, f.Name)
			}
			continue
		}
		if err := s.checkValue(t, id, f, v); err != nil {
			return err
		}
	}
	for n := range e {
		if t.byName[n] == nil {
			return fmt.Errorf("entity %s[%s]: unknown field `%s`", t.Name, id, n)
		}
	}
	if idv := e["id"]; idv.Kind == KindString && idv.Str != id {
		return fmt.Errorf("value of %s attribute 'id' conflicts with ID passed to `store.set()`: %q != %q", t.Name, idv.Str, id)
	}
	return nil
}

func (s *Schema) checkValue(t *EntityType, id string, f *Field, v Value) error {
	want := kindOf(f.Base)
	els := []Value{v}
	if f.List {
		if v.Kind != KindArray {
			return fmt.Errorf("entity %s[%s]: field `%s` is %v, not a list", t.Name, id, f.Name, v.Kind)
		}
		els = v.Array
	}
	for _, el := range els {
		if el.Kind != want {
			return fmt.Errorf("entity %s[%s]: field `%s` is %v, not %v", t.Name, id, f.Name, el.Kind, want)
		}
		if f.Enum && !contains(s.Enums[f.Base], el.Str) {
			return fmt.Errorf("entity %s[%s]: value `%s` of field `%s` is not in enum %s", t.Name, id, el.Str, f.Name, f.Base)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// recording is a store's JSON form: every version of every entity in
// Graph Node's serialisation, the indexed blocks and the head.
type recording struct {
	Head     Block                                    `json:"head"`
	Blocks   []Block                                  `json:"blocks"`
	Entities map[string]map[string][]recordingVersion `json:"entities"`
}

type recordingVersion struct {
	Block  uint64         `json:"block"`
	Entity map[string]any `json:"entity"` // null: removed
}

// Save writes the store as indented JSON, deterministically.
func (s *Store) Save(w io.Writer) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rec := recording{Head: s.head, Blocks: s.blocks, Entities: map[string]map[string][]recordingVersion{}}
	for typ, h := range s.entities {
		byID, err := h.recorded()
		if err != nil {
			return err
		}
		rec.Entities[typ] = byID
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(rec)
}

// LoadStore reads a store Save wrote, checking every version against the
// schema.
func LoadStore(s *Schema, r io.Reader) (*Store, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var rec recording
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("store recording: %w", err)
	}
	st := NewStore(s)
	st.head, st.blocks = rec.Head, rec.Blocks
	for typ, byID := range rec.Entities {
		t := s.Types[typ]
		if t == nil {
			return nil, fmt.Errorf("store recording: entity type %s is not in the schema", typ)
		}
		for id, vs := range byID {
			if err := st.load(t, id, vs); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// load puts an entity's recorded versions, oldest first, each checked
// against the schema.
func (s *Store) load(t *EntityType, id string, vs []recordingVersion) error {
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Block < vs[j].Block })
	for _, rv := range vs {
		var e Entity
		if rv.Entity != nil {
			var err error
			if e, err = s.schema.entityFromJSON(t, rv.Entity); err != nil {
				return fmt.Errorf("store recording: %s[%s]: %w", t.Name, id, err)
			}
			if err := s.schema.check(t, id, e); err != nil {
				return fmt.Errorf("store recording: %w", err)
			}
		}
		if err := s.put(t.Name, id, e, rv.Block); err != nil {
			return fmt.Errorf("store recording: %w", err)
		}
	}
	return nil
}

func (s *Schema) entityFromJSON(t *EntityType, raw map[string]any) (Entity, error) {
	e := make(Entity, len(raw))
	for k, jv := range raw {
		f := t.byName[k]
		if f == nil {
			return nil, fmt.Errorf("unknown field %s", k)
		}
		v, err := ParseField(f, jv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		e[k] = v
	}
	return e, nil
}

// ParseField reads a field's value from its JSON form (Value.JSON's
// output, decoded with UseNumber): a store that keeps a field as JSON
// reads it back with it.
func ParseField(f *Field, jv any) (Value, error) {
	kind := kindOf(f.Base)
	if !f.List {
		return parseValue(kind, jv)
	}
	list, ok := jv.([]any)
	if !ok {
		return Value{}, fmt.Errorf("not a list")
	}
	arr := Value{Kind: KindArray, Array: []Value{}}
	for _, el := range list {
		v, err := parseValue(kind, el)
		if err != nil {
			return Value{}, err
		}
		arr.Array = append(arr.Array, v)
	}
	return arr, nil
}

// KindOf is the kind of value a field of base type base stores.
func KindOf(base string) Kind { return kindOf(base) }
