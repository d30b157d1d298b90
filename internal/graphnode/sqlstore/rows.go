package sqlstore

import (
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// openSQL reads an entity's open version.
func (tb *table) openSQL() string {
	return `SELECT ` + tb.list + ` FROM ` + tb.name + ` WHERE id = ? AND upper IS NULL`
}

// atSQL reads the version of an entity that starts at or before a block:
// versions do not overlap, so it is the only one that can be valid there.
func (tb *table) atSQL() string {
	return `SELECT ` + tb.list + ` FROM ` + tb.name + ` WHERE id = ? AND lower <= ? ORDER BY lower DESC LIMIT 1`
}

// insertSQL writes a version, open (upper NULL) or closed.
func (tb *table) insertSQL() string {
	names := []string{"id", "lower", "upper"}
	marks := []string{"?", "?", "?"}
	for _, c := range tb.cols {
		names = append(names, c.name)
		marks = append(marks, "?")
	}
	return `INSERT INTO ` + tb.name + `(` + strings.Join(names, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
}

// insertArgs are a version's values for insertSQL (upper 0: open).
func (tb *table) insertArgs(id string, lower, upper uint64, e graphnode.Entity) ([]any, error) {
	args := make([]any, 3, 3+len(tb.cols))
	args[0], args[1] = tb.idArg(id), int64(lower)
	if upper != 0 {
		args[2] = int64(upper)
	}
	for _, c := range tb.cols {
		v, ok := e[c.f.Name]
		if !ok {
			args = append(args, nil)
			continue
		}
		sv, err := sqlValue(c.enc, v)
		if err != nil {
			return nil, err
		}
		args = append(args, sv)
	}
	return args, nil
}

// idArg is an id as the id column holds it: Bytes ids as bytes (compared
// as bytea is), others as text.
func (tb *table) idArg(id string) any {
	if tb.idBytes {
		b, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(id), "0x"))
		if err == nil {
			return b
		}
	}
	return id
}

func (tb *table) idString(raw any) string {
	switch v := raw.(type) {
	case []byte:
		return "0x" + hex.EncodeToString(v)
	case string:
		return v
	}
	return fmt.Sprint(raw)
}

// version is one stored row: its id, range and entity.
type version struct {
	graphnode.Row
	upper    uint64
	upperSet bool
}

// scanRows reads rows of tb.list (closing them).
func scanRows(rows *sql.Rows, tb *table) ([]graphnode.Row, error) {
	vs, err := scanVersions(rows, tb)
	out := make([]graphnode.Row, len(vs))
	for i, v := range vs {
		out[i] = v.Row
	}
	return out, err
}

func scanVersions(rows *sql.Rows, tb *table) ([]version, error) {
	defer rows.Close()
	var out []version
	vals := make([]any, 3+len(tb.cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		v, err := tb.decode(vals)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// decode reads one row of tb.list into a version.
func (tb *table) decode(vals []any) (version, error) {
	id := tb.idString(vals[0])
	lower, _ := vals[1].(int64)
	upper, upperSet := vals[2].(int64)
	e := make(graphnode.Entity, len(tb.cols)+1)
	if tb.idBytes {
		e["id"] = graphnode.HexBytes(id)
	} else {
		e["id"] = graphnode.String(id)
	}
	for i, c := range tb.cols {
		raw := vals[3+i]
		if raw == nil {
			continue
		}
		v, err := fieldValue(c.f, c.enc, raw)
		if err != nil {
			return version{}, fmt.Errorf("%s[%s]: %w", tb.typ.Name, id, err)
		}
		e[c.f.Name] = v
	}
	return version{Row: graphnode.Row{ID: id, Entity: e, Changed: uint64(lower)}, upper: uint64(upper), upperSet: upperSet}, nil
}
