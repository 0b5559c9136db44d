package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Key identifies a stored token: the MCP server's resource identifier and
// the issuer of the authorization server that granted it. A server that
// moves to another authorization server gets a new key, hence a new
// registration and token.
type Key struct {
	// Resource is the resource identifier the token was requested for.
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer.
	Issuer string `json:"issuer"`
}

// TokenStore keeps tokens between authorizations (and, for a persistent
// store, between runs). Implementations must be safe for concurrent use.
// Load returns a nil token and a nil error when nothing is stored under
// key; an error means the store failed, and the authorization goes on as
// if it held nothing. Save replaces what is stored under key; a nil token
// deletes it. Neither keeps a reference to the token after it returns.
type TokenStore interface {
	Load(ctx context.Context, key Key) (*Token, error)
	Save(ctx context.Context, key Key, tok *Token) error
}

// MemoryStore keeps tokens in memory, for the life of the process. The zero
// value is ready to use; it is the default store.
type MemoryStore struct {
	mu     sync.Mutex
	tokens map[Key]Token
}

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
// file. A FileStore is safe for concurrent use within one process; two
// processes sharing a file may lose each other's updates, never corrupt
// the file.
type FileStore struct {
	// Path is the file's name. Its directory must exist.
	Path string

	mu sync.Mutex
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
		return nil, fmt.Errorf("oauth: token store %s: not a token file: %w", f.Path, err)
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
