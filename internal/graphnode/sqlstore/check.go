package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
)

// Check runs SQLite's quick_check over the store file at path before the
// store is opened (it reads, writing nothing; a read-only connection would
// fail on the -wal and -shm files a crash leaves): a file damaged while the gateway was down
// (a page of garbage in the middle) opens without complaint and then
// fails every query that reads the page (attack 5, S15), so it is refused
// at start, naming the file. A file that does not exist yet is fine.
//
// quick_check verifies every page's structure and every record's format
// in time linear in the file's size (integrity_check, which also
// compares each index with its table, takes several times longer on a
// large store; a damaged page fails both).
func Check(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check(8)`)
	if err != nil {
		return fmt.Errorf("store %s: integrity check: %w", path, err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return fmt.Errorf("store %s: integrity check: %w", path, err)
		}
		if s != "ok" {
			found = append(found, s)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store %s: integrity check: %w", path, err)
	}
	if len(found) > 0 {
		return fmt.Errorf("store %s is damaged (%s)", path, strings.Join(found, "; "))
	}
	return nil
}
