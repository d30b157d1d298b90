package sqlstore

import (
	"context"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The executor's prefetch (graphnode.Batcher): a level of a query read in
// a few statements, as Graph Node reads it (one SQL query per field and
// level, the parents' ids in a list), rather than a statement per row.

// manyIDs bounds the ids or parents of one statement (SQLite allows
// 32,766 arguments).
const manyIDs = 500

// AtMany reads the entities of ids as of block n: for each id the
// version that starts at or before n, by the (id, lower) index as At
// reads one, then kept if still valid at n.
func (s *source) AtMany(ctx context.Context, typ string, ids []string, n uint64) (map[string]graphnode.Entity, error) {
	tb := s.st.tables[typ]
	out := make(map[string]graphnode.Entity, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), manyIDs)]
		ids = ids[len(chunk):]
		args := make([]any, 0, len(chunk)+1)
		byKey := make(map[string]string, len(chunk))
		for _, id := range chunk {
			arg := tb.idArg(id)
			args = append(args, arg)
			byKey[tb.idString(arg)] = id
		}
		args = append(args, int64(n))
		vs, err := s.read(ctx, tb, tb.atManySQL(len(chunk)), args...)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if id, ok := byKey[v.ID]; ok && !(v.upperSet && v.upper <= n) {
				out[id] = v.Entity
			}
		}
	}
	return out, nil
}

// atManySQL reads k entities' versions as atSQL reads one.
func (tb *table) atManySQL(k int) string {
	return `WITH ids(id) AS (VALUES ` + marks(k) + `) SELECT ` + tb.list +
		` FROM ` + tb.name + ` WHERE vid IN (SELECT (SELECT v.vid FROM ` + tb.name + ` AS v WHERE v.id = ids.id AND v.lower <= ?` +
		` ORDER BY v.lower DESC LIMIT 1) FROM ids)`
}

// SelectMany runs sel for each parent as a derived field's read, in one
// statement per manyIDs parents: for each parent (a list of values), the
// vids of its page, by Select's own read correlated to it (its index,
// order and LIMIT: a parent's page costs what it returns, however many
// children it has), then those rows by vid. The rows are told apart by
// the parent column they carry.
func (s *source) SelectMany(ctx context.Context, sel graphnode.Selection, field string, parents []string) (map[string][]graphnode.Row, error) {
	sel.Parent = &graphnode.Ref{Field: field}
	tb, page, pageArgs, exact, err := s.plan(sel, "parents.pid")
	if err != nil {
		return nil, err
	}
	if !exact {
		return nil, graphnode.ErrNotSelected
	}
	out := make(map[string][]graphnode.Row, len(parents))
	for len(parents) > 0 {
		chunk := parents[:min(len(parents), manyIDs)]
		parents = parents[len(chunk):]
		args := make([]any, 0, len(chunk)+len(pageArgs))
		for _, p := range chunk {
			args = append(args, p)
		}
		q := `WITH parents(pid) AS (VALUES ` + marks(len(chunk)) + `) SELECT ` + tb.list + ` FROM parents JOIN ` + tb.name +
			` ON vid IN (SELECT vid FROM (` + page + `))`
		vs, err := s.read(ctx, tb, q, append(args, pageArgs...)...)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			p := v.Entity[field].Str
			out[p] = append(out[p], v.Row)
		}
	}
	return out, nil
}

// marks are k rows of one argument each, for VALUES.
func marks(k int) string {
	return strings.TrimSuffix(strings.Repeat("(?), ", k), ", ")
}
