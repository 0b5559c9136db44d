package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaVersion is the user_version of a database whose tables this
// package created; Open refuses any other but 0 (a new file).
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS mini_me_sessions (
	key        INTEGER PRIMARY KEY AUTOINCREMENT,
	id         TEXT    NOT NULL UNIQUE,
	revision   INTEGER NOT NULL,
	last       INTEGER NOT NULL,
	through    INTEGER NOT NULL,
	state      TEXT,
	created    INTEGER NOT NULL,
	updated    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS mini_me_session_messages (
	session INTEGER NOT NULL,
	seq     INTEGER NOT NULL,
	body    TEXT    NOT NULL,
	PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mini_me_session_compactions (
	session INTEGER NOT NULL,
	idx     INTEGER NOT NULL,
	body    TEXT    NOT NULL,
	PRIMARY KEY (session, idx)
) WITHOUT ROWID;
`

// setup creates the tables in one transaction (several processes may open
// a new file at once) and checks the schema's version.
func setup(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch version {
	case schemaVersion:
		return nil
	case 0:
	default:
		return fmt.Errorf("the database's schema is version %d, this package knows %d", version, schemaVersion)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}
