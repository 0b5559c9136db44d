package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver of database/sql

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/internal/rows"
)

// BusyTimeout is how long an Append waits for another process's write to
// end before it fails (or less, when its context ends first).
const BusyTimeout = 30 * time.Second

// Store is a [session.Store] in an SQLite file. It is safe for concurrent
// use; the Appends of one Store take their turn in the process, so that
// only the writes of other processes make one wait for the file's lock.
// Close it when done.
type Store struct {
	db *sql.DB
	// write holds the turn of an Append in this process; a channel, not
	// a mutex, so that waiting for it ends with the caller's context.
	write chan struct{}
}

var _ session.Store = (*Store)(nil)

// Open opens the database file at path, creating it and its tables if
// need be.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: no database path")
	}
	q := url.Values{}
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	q.Set("_txlock", "immediate") // a write transaction takes the lock at BEGIN, so waiting for it obeys busy_timeout
	// A "file:" URI, so that a path holding '?' or '#' stays a path.
	dsn := (&url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	if err := setup(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite: opening %s: %w", path, err)
	}
	return &Store{db: db, write: make(chan struct{}, 1)}, nil
}

// Close closes the database. Calls after Close fail.
func (s *Store) Close() error {
	return s.db.Close()
}

// Append implements session.Store.
func (s *Store) Append(ctx context.Context, id string, b session.Batch) (session.Info, error) {
	if err := session.CheckID(id); err != nil {
		return session.Info{}, err
	}
	if err := b.Check(); err != nil {
		return session.Info{}, err
	}
	release, err := s.turn(ctx)
	if err != nil {
		return session.Info{}, wrap(ctx, "appending to "+strconv.Quote(id), err)
	}
	defer release()
	info, err := s.append(ctx, id, &b)
	if err != nil {
		return session.Info{}, wrap(ctx, "appending to "+strconv.Quote(id), err)
	}
	return info, nil
}

// turn waits for this process's turn to write, until ctx ends.
func (s *Store) turn(ctx context.Context) (release func(), err error) {
	select {
	case s.write <- struct{}{}:
		return func() { <-s.write }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// wrap says what failed; when ctx has ended, the error wraps ctx.Err()
// whatever the driver said.
func wrap(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("sqlite: %s: %w (%w)", what, cerr, err)
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

func (s *Store) append(ctx context.Context, id string, b *session.Batch) (session.Info, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return session.Info{}, err
	}
	defer func() { _ = tx.Rollback() }()
	var key, rev, last int64
	err = tx.QueryRowContext(ctx, `SELECT key, revision, last FROM mini_me_sessions WHERE id = ?`, id).Scan(&key, &rev, &last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return session.Info{}, err
	}
	exists := err == nil
	if err := b.Precondition(rev, last); err != nil {
		return session.Info{}, err
	}
	now := time.Now().UnixMicro()
	if !exists {
		err := tx.QueryRowContext(ctx, `INSERT INTO mini_me_sessions (id, revision, last, through, created, updated)
			VALUES (?, 0, 0, 0, ?, ?) RETURNING key`, id, now, now).Scan(&key)
		if err != nil {
			return session.Info{}, err
		}
	}
	if err := insertBodies(ctx, tx, `INSERT INTO mini_me_session_messages (session, seq, body) VALUES (?, ?, ?)`,
		key, last+1, b.Messages); err != nil {
		return session.Info{}, err
	}
	through := sql.NullInt64{}
	if c := b.Compaction; c != nil {
		through = sql.NullInt64{Int64: c.Through, Valid: true}
		if _, err := tx.ExecContext(ctx, `DELETE FROM mini_me_session_compactions WHERE session = ?`, key); err != nil {
			return session.Info{}, err
		}
		if err := insertBodies(ctx, tx, `INSERT INTO mini_me_session_compactions (session, idx, body) VALUES (?, ?, ?)`,
			key, 0, c.Messages); err != nil {
			return session.Info{}, err
		}
	}
	stateOp, state := stateChange(b)
	info := session.Info{ID: id}
	var hasState bool
	var created, updated int64
	err = tx.QueryRowContext(ctx, `UPDATE mini_me_sessions SET
			revision = revision + 1,
			last = ?,
			through = coalesce(?, through),
			state = CASE ? WHEN 0 THEN state WHEN 1 THEN ? ELSE NULL END,
			updated = max(updated, ?)
		WHERE key = ?
		RETURNING revision, last, through, state IS NOT NULL, created, updated`,
		last+int64(len(b.Messages)), through, stateOp, state, now, key).
		Scan(&info.Revision, &info.Last, &info.Through, &hasState, &created, &updated)
	if err != nil {
		return session.Info{}, err
	}
	info.HasState, info.Created, info.Updated = hasState, micros(created), micros(updated)
	if err := tx.Commit(); err != nil {
		return session.Info{}, err
	}
	return info, nil
}

// insertBodies inserts each value with (key, first+i, value) by the
// statement query.
func insertBodies(ctx context.Context, tx *sql.Tx, query string, key, first int64, values []json.RawMessage) error {
	if len(values) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, v := range values {
		if _, err := stmt.ExecContext(ctx, key, first+int64(i), string(v)); err != nil {
			return err
		}
	}
	return nil
}

// stateChange returns what b does to the state: 0 nothing, 1 set it to
// the returned value, 2 clear it.
func stateChange(b *session.Batch) (op int, state sql.NullString) {
	switch {
	case b.State != nil:
		return 1, sql.NullString{String: string(b.State), Valid: true}
	case b.ClearState:
		return 2, state
	}
	return 0, state
}

// Load implements session.Store. It reads in one transaction, a snapshot
// that no concurrent Append changes.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	if err := session.CheckID(id); err != nil {
		return nil, err
	}
	sess, err := s.load(ctx, id)
	if err != nil {
		return nil, wrap(ctx, "loading "+strconv.Quote(id), err)
	}
	return sess, nil
}

func (s *Store) load(ctx context.Context, id string) (*session.Session, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: no write lock
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	key, info, state, err := readSession(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	sess := &session.Session{Info: info, Messages: make([]json.RawMessage, 0, info.Last-info.Through)}
	if state.Valid {
		sess.State = json.RawMessage(state.String)
	}
	if sess.Messages, err = appendBodies(ctx, tx, sess.Messages,
		`SELECT body FROM mini_me_session_compactions WHERE session = ? ORDER BY idx`, key); err != nil {
		return nil, err
	}
	if sess.Messages, err = appendBodies(ctx, tx, sess.Messages,
		`SELECT body FROM mini_me_session_messages WHERE session = ? AND seq > ? ORDER BY seq`, key, info.Through); err != nil {
		return nil, err
	}
	return sess, nil
}

// readSession reads the row of conversation id.
func readSession(ctx context.Context, tx *sql.Tx, id string) (key int64, info session.Info, state sql.NullString, err error) {
	info.ID = id
	var created, updated int64
	err = tx.QueryRowContext(ctx, `SELECT key, revision, last, through, state, created, updated FROM mini_me_sessions WHERE id = ?`, id).
		Scan(&key, &info.Revision, &info.Last, &info.Through, &state, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, info, state, session.ErrNotFound
	}
	info.HasState, info.Created, info.Updated = state.Valid, micros(created), micros(updated)
	return key, info, state, err
}

// appendBodies appends to dst the one column of each row of the query.
func appendBodies(ctx context.Context, tx *sql.Tx, dst []json.RawMessage, query string, args ...any) ([]json.RawMessage, error) {
	r, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return rows.Collect(dst, r, rows.Body)
}

// History implements session.Store.
func (s *Store) History(ctx context.Context, id string, after int64, limit int) ([]session.Entry, error) {
	if err := session.CheckID(id); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = session.DefaultHistoryLimit
	}
	entries, err := s.history(ctx, id, after, limit)
	if err != nil {
		return nil, wrap(ctx, "reading the history of "+strconv.Quote(id), err)
	}
	return entries, nil
}

func (s *Store) history(ctx context.Context, id string, after int64, limit int) ([]session.Entry, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback() }()
	key, _, _, err := readSession(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	r, err := tx.QueryContext(ctx, `SELECT seq, body FROM mini_me_session_messages WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?`,
		key, after, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return rows.Collect([]session.Entry{}, r, rows.Entry)
}

// List implements session.Store.
func (s *Store) List(ctx context.Context, opts session.ListOptions) ([]session.Info, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = session.DefaultListLimit
	}
	// substr and length count characters alike; id > ? compares bytes
	// (the BINARY collation), which is the order List promises.
	r, err := s.db.QueryContext(ctx, `SELECT id, revision, last, through, state IS NOT NULL, created, updated
		FROM mini_me_sessions WHERE id > ? AND substr(id, 1, length(?2)) = ?2 ORDER BY id LIMIT ?`,
		opts.After, opts.Prefix, limit)
	if err != nil {
		return nil, wrap(ctx, "listing conversations", err)
	}
	defer r.Close()
	out, err := rows.Collect([]session.Info{}, r, func(r rows.Rows) (session.Info, error) {
		var in session.Info
		var created, updated int64
		err := r.Scan(&in.ID, &in.Revision, &in.Last, &in.Through, &in.HasState, &created, &updated)
		in.Created, in.Updated = micros(created), micros(updated)
		return in, err
	})
	if err != nil {
		return nil, wrap(ctx, "listing conversations", err)
	}
	return out, nil
}

// Delete implements session.Store.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := session.CheckID(id); err != nil {
		return err
	}
	release, err := s.turn(ctx)
	if err != nil {
		return wrap(ctx, "deleting "+strconv.Quote(id), err)
	}
	defer release()
	if err := s.delete(ctx, id); err != nil {
		return wrap(ctx, "deleting "+strconv.Quote(id), err)
	}
	return nil
}

func (s *Store) delete(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var key int64
	err = tx.QueryRowContext(ctx, `DELETE FROM mini_me_sessions WHERE id = ? RETURNING key`, id).Scan(&key)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, table := range []string{"mini_me_session_messages", "mini_me_session_compactions"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE session = ?`, key); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }
