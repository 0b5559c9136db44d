package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/agent/session"
	"git.rickub.com/bots-garden/mini-me/agent/session/internal/rows"
)

// Store is a [session.Store] in a PostgreSQL database. Its zero value is
// not usable: set Pool, and call Setup once (it is idempotent: every
// worker may call it as it starts). It is safe for concurrent use, by any
// number of processes sharing the database.
type Store struct {
	// Pool is the database.
	Pool *pgxpool.Pool
}

var _ session.Store = (*Store)(nil)

// setupLock is the key of the advisory lock Setup holds, so that workers
// starting at once do not race to create the same tables.
const setupLock = 0x6d696e692d6d65 // "mini-me"

const schema = `
CREATE TABLE IF NOT EXISTS mini_me_sessions (
	key      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id       text COLLATE "C" NOT NULL UNIQUE,
	revision bigint NOT NULL,
	last     bigint NOT NULL,
	through  bigint NOT NULL,
	state    json,
	created  timestamptz NOT NULL,
	updated  timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS mini_me_session_messages (
	session bigint NOT NULL,
	seq     bigint NOT NULL,
	body    json   NOT NULL,
	PRIMARY KEY (session, seq)
);
CREATE TABLE IF NOT EXISTS mini_me_session_compactions (
	session bigint  NOT NULL,
	idx     integer NOT NULL,
	body    json    NOT NULL,
	PRIMARY KEY (session, idx)
);`

// Setup creates the tables if they do not exist (see the package
// comment).
func (s *Store) Setup(ctx context.Context) error {
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(setupLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return wrap(ctx, "creating the tables", err)
	}
	return nil
}

// Append implements session.Store.
func (s *Store) Append(ctx context.Context, id string, b session.Batch) (session.Info, error) {
	if err := session.CheckID(id); err != nil {
		return session.Info{}, err
	}
	if err := b.Check(); err != nil {
		return session.Info{}, err
	}
	var info session.Info
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		info, err = appendTx(ctx, tx, id, &b)
		return err
	})
	if err != nil {
		return session.Info{}, wrap(ctx, "appending to "+strconv.Quote(id), err)
	}
	return info, nil
}

func appendTx(ctx context.Context, tx pgx.Tx, id string, b *session.Batch) (session.Info, error) {
	key, rev, last, err := lockSession(ctx, tx, id)
	if err != nil {
		return session.Info{}, err
	}
	if err := b.Precondition(rev, last); err != nil {
		return session.Info{}, err
	}
	if err := insertBodies(ctx, tx, `INSERT INTO mini_me_session_messages (session, seq, body)
		SELECT $1, $2 + n - 1, body::json FROM unnest($3::text[]) WITH ORDINALITY AS t(body, n)`, key, last+1, b.Messages); err != nil {
		return session.Info{}, err
	}
	var through *int64
	if c := b.Compaction; c != nil {
		through = &c.Through
		if _, err := tx.Exec(ctx, `DELETE FROM mini_me_session_compactions WHERE session = $1`, key); err != nil {
			return session.Info{}, err
		}
		if err := insertBodies(ctx, tx, `INSERT INTO mini_me_session_compactions (session, idx, body)
			SELECT $1, $2 + n - 1, body::json FROM unnest($3::text[]) WITH ORDINALITY AS t(body, n)`, key, 0, c.Messages); err != nil {
			return session.Info{}, err
		}
	}
	var state *string
	if b.State != nil {
		state = new(string)
		*state = string(b.State)
	}
	info := session.Info{ID: id}
	err = tx.QueryRow(ctx, `UPDATE mini_me_sessions SET
			revision = revision + 1,
			last = $2,
			through = coalesce($3, through),
			state = CASE WHEN $4::text IS NOT NULL THEN $4::json WHEN $5 THEN NULL ELSE state END,
			updated = greatest(updated, now())
		WHERE key = $1
		RETURNING revision, last, through, state IS NOT NULL, created, updated`,
		key, last+int64(len(b.Messages)), through, state, b.ClearState).
		Scan(&info.Revision, &info.Last, &info.Through, &info.HasState, &info.Created, &info.Updated)
	info.Created, info.Updated = info.Created.UTC(), info.Updated.UTC()
	return info, err
}

// lockSession returns the row of conversation id, created if need be,
// locked until the end of tx. It tries up to three times, as another
// writer may create the row between its look-up and its insert, or
// delete it while it waits for the lock.
func lockSession(ctx context.Context, tx pgx.Tx, id string) (key, rev, last int64, err error) {
	for range 3 {
		err = tx.QueryRow(ctx, `SELECT key, revision, last FROM mini_me_sessions WHERE id = $1 FOR UPDATE`, id).Scan(&key, &rev, &last)
		if !errors.Is(err, pgx.ErrNoRows) {
			return key, rev, last, err
		}
		err = tx.QueryRow(ctx, `INSERT INTO mini_me_sessions (id, revision, last, through, created, updated)
			VALUES ($1, 0, 0, 0, now(), now()) ON CONFLICT (id) DO NOTHING RETURNING key`, id).Scan(&key)
		if !errors.Is(err, pgx.ErrNoRows) { // ErrNoRows: another writer created it meanwhile
			return key, 0, 0, err
		}
	}
	return 0, 0, 0, errors.New("the conversation was created or deleted by others three times while this append waited")
}

// insertBodies runs query with (key, first, values as text[]).
func insertBodies(ctx context.Context, tx pgx.Tx, query string, key, first int64, values []json.RawMessage) error {
	if len(values) == 0 {
		return nil
	}
	texts := make([]string, len(values))
	for i, v := range values {
		texts[i] = string(v)
	}
	_, err := tx.Exec(ctx, query, key, first, texts)
	return err
}

// readOnly is how Load and History read: one snapshot.
var readOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// Load implements session.Store.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	if err := session.CheckID(id); err != nil {
		return nil, err
	}
	var sess *session.Session
	err := pgx.BeginTxFunc(ctx, s.Pool, readOnly, func(tx pgx.Tx) error {
		key, info, state, err := readSession(ctx, tx, id)
		if err != nil {
			return err
		}
		sess = &session.Session{Info: info, Messages: make([]json.RawMessage, 0, info.Last-info.Through)}
		if state != nil {
			sess.State = json.RawMessage(*state)
		}
		if sess.Messages, err = appendBodies(ctx, tx, sess.Messages,
			`SELECT body::text FROM mini_me_session_compactions WHERE session = $1 ORDER BY idx`, key); err != nil {
			return err
		}
		sess.Messages, err = appendBodies(ctx, tx, sess.Messages,
			`SELECT body::text FROM mini_me_session_messages WHERE session = $1 AND seq > $2 ORDER BY seq`, key, info.Through)
		return err
	})
	if err != nil {
		return nil, wrap(ctx, "loading "+strconv.Quote(id), err)
	}
	return sess, nil
}

// readSession reads the row of conversation id.
func readSession(ctx context.Context, tx pgx.Tx, id string) (key int64, info session.Info, state *string, err error) {
	info.ID = id
	err = tx.QueryRow(ctx, `SELECT key, revision, last, through, state::text, created, updated FROM mini_me_sessions WHERE id = $1`, id).
		Scan(&key, &info.Revision, &info.Last, &info.Through, &state, &info.Created, &info.Updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, info, nil, session.ErrNotFound
	}
	info.HasState, info.Created, info.Updated = state != nil, info.Created.UTC(), info.Updated.UTC()
	return key, info, state, err
}

// appendBodies appends to dst the one text column of each row of the
// query.
func appendBodies(ctx context.Context, tx pgx.Tx, dst []json.RawMessage, query string, args ...any) ([]json.RawMessage, error) {
	r, err := tx.Query(ctx, query, args...)
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
	out := []session.Entry{}
	err := pgx.BeginTxFunc(ctx, s.Pool, readOnly, func(tx pgx.Tx) error {
		key, _, _, err := readSession(ctx, tx, id)
		if err != nil {
			return err
		}
		r, err := tx.Query(ctx, `SELECT seq, body::text FROM mini_me_session_messages
			WHERE session = $1 AND seq > $2 ORDER BY seq LIMIT $3`, key, after, limit)
		if err != nil {
			return err
		}
		defer r.Close()
		out, err = rows.Collect(out, r, rows.Entry)
		return err
	})
	if err != nil {
		return nil, wrap(ctx, "reading the history of "+strconv.Quote(id), err)
	}
	return out, nil
}

// List implements session.Store.
func (s *Store) List(ctx context.Context, opts session.ListOptions) ([]session.Info, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = session.DefaultListLimit
	}
	// id's collation is "C": ORDER BY and > compare bytes, the order
	// List promises.
	r, err := s.Pool.Query(ctx, `SELECT id, revision, last, through, state IS NOT NULL, created, updated
		FROM mini_me_sessions WHERE id > $1 AND starts_with(id, $2) ORDER BY id LIMIT $3`, opts.After, opts.Prefix, limit)
	if err != nil {
		return nil, wrap(ctx, "listing conversations", err)
	}
	defer r.Close()
	out, err := rows.Collect([]session.Info{}, r, func(r rows.Rows) (session.Info, error) {
		var in session.Info
		err := r.Scan(&in.ID, &in.Revision, &in.Last, &in.Through, &in.HasState, &in.Created, &in.Updated)
		in.Created, in.Updated = in.Created.UTC(), in.Updated.UTC()
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
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var key int64
		err := tx.QueryRow(ctx, `DELETE FROM mini_me_sessions WHERE id = $1 RETURNING key`, id).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, table := range []string{"mini_me_session_messages", "mini_me_session_compactions"} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE session = $1`, key); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrap(ctx, "deleting "+strconv.Quote(id), err)
	}
	return nil
}

// wrap says what failed; when ctx has ended, the error wraps ctx.Err()
// whatever the driver said.
func wrap(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("postgres: %s: %w (%w)", what, cerr, err)
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}
