// Package rows reads the rows of the session stores' queries, the same
// way for database/sql (SQLite) and pgx (PostgreSQL).
package rows

import (
	"encoding/json"

	"git.rickub.com/bots-garden/mini-me/agent/session"
)

// Rows is what *sql.Rows and pgx.Rows have in common; the caller closes
// them.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// Collect appends to dst what scan makes of each row.
func Collect[T any](dst []T, r Rows, scan func(Rows) (T, error)) ([]T, error) {
	for r.Next() {
		v, err := scan(r)
		if err != nil {
			return nil, err
		}
		dst = append(dst, v)
	}
	return dst, r.Err()
}

// Body scans a row of one column: a message.
func Body(r Rows) (json.RawMessage, error) {
	var b []byte
	err := r.Scan(&b)
	return b, err
}

// Entry scans a row of two columns: a sequence number and its message.
func Entry(r Rows) (session.Entry, error) {
	var e session.Entry
	var b []byte
	err := r.Scan(&e.Seq, &b)
	e.Message = b
	return e, err
}
