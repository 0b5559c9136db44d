package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Key identifies a stored token: the MCP server's resource identifier, the
// issuer of the authorization server that granted it, and the client it
// was granted to. A server that moves to another authorization server gets
// a new key, hence a new registration and token; two configured clients of
// one server (two entries with the same URL) never share, nor rotate, one
// refresh token.
type Key struct {
	// Resource is the resource identifier the token was requested for.
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer.
	Issuer string `json:"issuer"`
	// Client is the pre-registered client id of Config.ClientID (a
	// Client ID Metadata Document URL included); empty for a client the
	// Authorizer registers itself, whose id is known only from the token.
	Client string `json:"client,omitempty"`
}

// TokenStore keeps tokens between authorizations (and, for a persistent
// store, between runs). Implementations must be safe for concurrent use.
// Load returns a nil token and a nil error when nothing is stored under
// key; an error means the store failed, and the authorization goes on as
// if it held nothing. Save replaces what is stored under key; a nil token
// deletes it. Neither keeps a reference to the token after it returns.
//
// A store shared by several processes (a file, a database) should also be
// a [LockingStore], so that they do not refresh one token at once.
type TokenStore interface {
	Load(ctx context.Context, key Key) (*Token, error)
	Save(ctx context.Context, key Key, tok *Token) error
}

// LockingStore is a TokenStore that can hold off every other user of the
// store (other processes, other Authorizers) while one of them renews a
// token. Authorization servers rotate refresh tokens and revoke the whole
// grant when an old one comes back, so two processes that refresh the
// same stored token at once lose the sign-in: the lock makes the
// read-refresh-write one step.
//
// Lock blocks until the caller holds the lock for key, or ctx ends; then
// it returns ctx's error (wrapped) and holds nothing. The lock excludes
// every Lock of the same key through any store value over the same
// storage, in this process and in others; it may cover more than key (a
// whole file). It is not reentrant: the holder never calls Lock again
// before it releases. unlock releases the lock; it is called exactly once,
// must not block for long, and reports no error (a store that fails to
// release logs it, and must still release on the holder's exit: a lock
// tied to an open file, a database session or a transaction, never one a
// crashed process leaves held).
//
// While it holds the lock, the Authorizer calls Load(key), sends at most
// one token request (bounded by its HTTP client's timeout, 30 s for its
// own), and calls Save(key) with the result; Load and Save must work for
// the holder while the lock is held, and must not take it themselves.
// The Authorizer never holds two locks at once, so a store needs no lock
// order.
//
// MemoryStore and FileStore implement it. A TokenStore that is not a
// LockingStore is renewed under the Authorizer's own lock only: it must
// not be shared by two Authorizers of the same key.
type LockingStore interface {
	TokenStore
	Lock(ctx context.Context, key Key) (unlock func(), err error)
}

// MemoryStore keeps tokens in memory, for the life of the process. The zero
// value is ready to use; it is the default store.
type MemoryStore struct {
	mu     sync.Mutex
	tokens map[Key]Token
	locks  map[Key]*semaphore // one per key ever locked
}

// Lock holds off the other Authorizers of this store while one renews the
// token of key (see LockingStore); other keys are not held up.
func (m *MemoryStore) Lock(ctx context.Context, key Key) (func(), error) {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[Key]*semaphore{}
	}
	l := m.locks[key]
	if l == nil {
		l = &semaphore{}
		m.locks[key] = l
	}
	m.mu.Unlock()
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	return l.release, nil
}

// semaphore is a mutex whose acquisition honours a context; the zero
// value is unlocked.
type semaphore struct {
	once sync.Once
	ch   chan struct{}
}

func (s *semaphore) acquire(ctx context.Context) error {
	s.once.Do(func() { s.ch = make(chan struct{}, 1) })
	select {
	case s.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("oauth: waiting for the token store's lock: %w", ctx.Err())
	}
}

func (s *semaphore) release() { <-s.ch }

// Load returns a copy of the token stored under key.
func (m *MemoryStore) Load(_ context.Context, key Key) (*Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[key]
	if !ok {
		return nil, nil
	}
	return copyToken(&t), nil
}

// Save stores a copy of tok under key, or deletes key when tok is nil.
func (m *MemoryStore) Save(_ context.Context, key Key, tok *Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if tok == nil {
		delete(m.tokens, key)
		return nil
	}
	if m.tokens == nil {
		m.tokens = map[Key]Token{}
	}
	m.tokens[key] = *copyToken(tok)
	return nil
}

func copyToken(t *Token) *Token {
	c := *t
	c.Scopes = append([]string(nil), t.Scopes...)
	return &c
}

// FileStore keeps tokens in one JSON file, readable by its owner only
// (mode 0600). Every Save rewrites the file atomically (a temporary file in
// the same directory, synced, then renamed), so a crash never leaves half a
// file. A file that is not a token file (damaged, or written by another
// program) fails every Load, so the Authorizer logs a warning and signs in
// again; the Save of that sign-in replaces the file, and keeps what it
// held as Path+".corrupt", mode 0600 too. A token file that others than
// its owner may read or write (mode beyond 0600, on systems with Unix
// permissions) is used, with a warning in the Authorizer's log, until the
// next Save rewrites it 0600.
//
// A FileStore is safe for concurrent use, and its Lock (see LockingStore)
// holds an advisory lock, flock(2), on the file Path+".lock", so that two
// processes sharing the file never refresh one token at once. The limits
// of that lock: it is advisory (a program that writes the file without
// taking it is not held off); it covers the whole file, not one key; it
// exists on Linux, macOS and the BSDs only (elsewhere Lock holds off the
// users of this FileStore value only); and over a network file system it
// holds only where the file system supports flock across machines.
type FileStore struct {
	// Path is the file's name. Its directory must exist.
	Path string

	mu   sync.Mutex // one Load or Save at a time
	lock semaphore  // Lock, in this process
}

// Lock takes the lock of the file, across processes (see LockingStore),
// polling for it at most every 100 ms.
func (f *FileStore) Lock(ctx context.Context, _ Key) (func(), error) {
	if err := f.lock.acquire(ctx); err != nil {
		return nil, err
	}
	lf, err := lockFile(ctx, f.Path+".lock")
	if err != nil {
		f.lock.release()
		return nil, fmt.Errorf("oauth: token store lock: %w", err)
	}
	return func() {
		_ = lf.Close() // closing the file releases its flock
		f.lock.release()
	}, nil
}

type storedToken struct {
	Key
	Token Token `json:"token"`
}

// Load reads the token stored under key.
func (f *FileStore) Load(_ context.Context, key Key) (*Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if err != nil {
		return nil, err
	}
	for _, s := range all {
		if s.Key == key {
			return &s.Token, nil
		}
	}
	return nil, nil
}

// Save replaces the token stored under key (deletes it when tok is nil).
func (f *FileStore) Save(_ context.Context, key Key, tok *Token) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	all, err := f.read()
	if errors.Is(err, errNotTokenFile) {
		// Replaced, not lost: the old content stays beside it, for its
		// owner only, as it may hold tokens all the same.
		if err := os.Chmod(f.Path, 0o600); err != nil {
			return fmt.Errorf("oauth: token store: %s is not a token file, and it cannot be kept aside as %s.corrupt for its owner only (fix or remove it): %w",
				f.Path, filepath.Base(f.Path), err)
		}
		if err := os.Rename(f.Path, f.Path+".corrupt"); err != nil {
			return fmt.Errorf("oauth: token store: %w", err)
		}
		all, err = nil, nil
	}
	if err != nil {
		return err
	}
	out := all[:0]
	for _, s := range all {
		if s.Key != key {
			out = append(out, s)
		}
	}
	if tok != nil {
		out = append(out, storedToken{Key: key, Token: *tok})
	}
	return f.write(out)
}

// exposed returns a warning when the token file can be read or written by
// others than its owner (a mode beyond 0600, where modes mean that), ""
// otherwise.
func (f *FileStore) exposed() string {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		return ""
	}
	fi, err := os.Stat(f.Path)
	if err != nil || fi.Mode().Perm()&0o077 == 0 {
		return ""
	}
	return fmt.Sprintf("oauth: the token file %s has mode %04o: other users of this machine may read its tokens; make it 0600 (the next save does)", f.Path, fi.Mode().Perm())
}

// errNotTokenFile: the file exists and does not hold tokens.
var errNotTokenFile = errors.New("oauth: token store: not a token file")

func (f *FileStore) read() ([]storedToken, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: token store: %w", err)
	}
	var all []storedToken
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("%w: %s (%v); the next sign-in replaces it, keeping it as %s.corrupt", errNotTokenFile, f.Path, err, filepath.Base(f.Path))
	}
	return all, nil
}

func (f *FileStore) write(all []storedToken) error {
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".*")
	if err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	// CreateTemp makes the file 0600 already; say it, in case of an odd
	// umask-free platform.
	err = errors.Join(tmp.Chmod(0o600), write(tmp, b), tmp.Sync(), tmp.Close())
	if err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.Path); err != nil {
		return fmt.Errorf("oauth: token store: %w", err)
	}
	return nil
}

func write(f *os.File, b []byte) error {
	_, err := f.Write(b)
	return err
}
