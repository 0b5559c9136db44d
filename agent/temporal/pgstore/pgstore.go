// Package pgstore keeps the OAuth tokens of mini-me's Authorizers in a
// PostgreSQL table, so that workers on several machines share one sign-in
// per MCP server and renew it one at a time: Store is an
// [oauth.LockingStore] whose lock is a PostgreSQL advisory lock.
//
// The table (Setup creates it) has one row per [oauth.Key]:
//
//	CREATE TABLE IF NOT EXISTS mini_me_oauth_tokens (
//		resource text NOT NULL,
//		issuer   text NOT NULL,
//		client   text NOT NULL,
//		token    jsonb NOT NULL,
//		updated  timestamptz NOT NULL DEFAULT now(),
//		PRIMARY KEY (resource, issuer, client)
//	)
//
// token is the [oauth.Token] as JSON, access and refresh tokens and client
// secret included, in clear: whoever can read the table can use the
// tokens, so grant access to it as to the secrets it holds. The store
// never puts a token in an error or a log record.
package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// DefaultTable is the table of a Store whose Table is empty.
const DefaultTable = "mini_me_oauth_tokens"

// unlockTimeout bounds the release of a lock (see Store.Lock).
const unlockTimeout = 5 * time.Second

// Store is an [oauth.LockingStore] on a PostgreSQL database. Its zero
// value is not usable: set Pool. It is safe for concurrent use, by any
// number of Authorizers, in any number of processes sharing the database.
//
// Load and Save are single statements on a connection of Pool. Lock takes
// a session advisory lock, pg_advisory_lock, on a 64-bit hash of the key,
// on a connection it takes out of Pool and keeps until unlock: so Pool
// must have a connection more than the locks this process holds at once
// (one per Authorizer renewing a token), or Load and Save wait for one
// until their context ends. The limits of the lock:
//   - it is advisory: a program that writes the table without taking it
//     is not held off;
//   - two keys whose hashes collide share one lock (one renewal waits for
//     the other, nothing worse);
//   - it lives as long as its connection: if the connection is lost (a
//     network failure, the server's idle_session_timeout, a restart of
//     the server) PostgreSQL releases the lock while the holder may still
//     be refreshing, and another worker may then refresh the same token.
//     A crashed holder's lock is released the same way, so no lock is
//     ever left held.
type Store struct {
	// Pool is the database.
	Pool *pgxpool.Pool
	// Table is the name of the table (one identifier, quoted as given);
	// empty means DefaultTable.
	Table string
	// Logger receives the failures of unlock, which returns no error;
	// nil discards them.
	Logger *slog.Logger
}

func (s *Store) table() string {
	if s.Table == "" {
		return pgx.Identifier{DefaultTable}.Sanitize()
	}
	return pgx.Identifier{s.Table}.Sanitize()
}

// Setup creates the table if it does not exist (see the package comment).
func (s *Store) Setup(ctx context.Context) error {
	_, err := s.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.table()+` (
	resource text NOT NULL,
	issuer   text NOT NULL,
	client   text NOT NULL,
	token    jsonb NOT NULL,
	updated  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (resource, issuer, client))`)
	if err != nil {
		return fmt.Errorf("pgstore: creating the table: %w", err)
	}
	return nil
}

// Load returns the token stored under key, or nil when there is none.
func (s *Store) Load(ctx context.Context, key oauth.Key) (*oauth.Token, error) {
	var raw []byte
	err := s.Pool.QueryRow(ctx, `SELECT token FROM `+s.table()+` WHERE resource = $1 AND issuer = $2 AND client = $3`,
		key.Resource, key.Issuer, key.Client).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading the token of %s: %w", key.Resource, err)
	}
	var tok oauth.Token
	if err := json.Unmarshal(raw, &tok); err != nil {
		// The decoder's error is left out: it may quote the stored value.
		return nil, fmt.Errorf("pgstore: the stored token of %s is not a token", key.Resource)
	}
	return &tok, nil
}

// Save stores tok under key, replacing what was there; a nil tok deletes
// it.
func (s *Store) Save(ctx context.Context, key oauth.Key, tok *oauth.Token) error {
	var err error
	if tok == nil {
		_, err = s.Pool.Exec(ctx, `DELETE FROM `+s.table()+` WHERE resource = $1 AND issuer = $2 AND client = $3`,
			key.Resource, key.Issuer, key.Client)
	} else {
		var raw []byte
		if raw, err = json.Marshal(tok); err != nil {
			return fmt.Errorf("pgstore: encoding the token of %s: %w", key.Resource, err)
		}
		_, err = s.Pool.Exec(ctx, `INSERT INTO `+s.table()+` (resource, issuer, client, token) VALUES ($1, $2, $3, $4)
	ON CONFLICT (resource, issuer, client) DO UPDATE SET token = EXCLUDED.token, updated = now()`,
			key.Resource, key.Issuer, key.Client, raw)
	}
	if err != nil {
		return fmt.Errorf("pgstore: saving the token of %s: %w", key.Resource, err)
	}
	return nil
}

// Lock holds off every other Lock of key on this database, in this
// process and in others, until unlock (see oauth.LockingStore and the
// limits in Store's comment). It waits for the lock until ctx ends; then
// it closes the connection it waited on, so that a lock granted as ctx
// ended is released with it. unlock waits at most 5 s for the server to
// release the lock; failing that, it logs and closes the connection,
// which releases it too.
func (s *Store) Lock(ctx context.Context, key oauth.Key) (func(), error) {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgstore: locking the token of %s: %w", key.Resource, err)
	}
	id := lockID(key)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, id); err != nil {
		discard(conn)
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("pgstore: locking the token of %s: %w", key.Resource, err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		var released bool
		if err := conn.QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, id).Scan(&released); err != nil || !released {
			s.logger().Warn("pgstore: releasing the lock failed; closing its connection", "resource", key.Resource, "error", err)
			discard(conn)
			return
		}
		conn.Release()
	}, nil
}

// discard closes conn, releasing its session's locks, and gives it back
// to the pool, which drops it.
func discard(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	_ = conn.Conn().Close(ctx)
	conn.Release()
}

func (s *Store) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// lockID is the advisory lock of key: the first 8 bytes of a SHA-256 of
// its fields, each preceded by its length so that no two keys run into
// one string.
func lockID(key oauth.Key) int64 {
	h := sha256.New()
	for _, f := range []string{key.Resource, key.Issuer, key.Client} {
		_ = binary.Write(h, binary.BigEndian, uint64(len(f)))
		h.Write([]byte(f))
	}
	return int64(binary.BigEndian.Uint64(h.Sum(nil)))
}

var _ oauth.LockingStore = (*Store)(nil)
