package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/origin"
)

// dpopKey is an Authorizer's DPoP key pair (RFC 9449, SEP-1932), made when
// the Authorizer is and never stored or logged, with the last nonce each
// server (origin) gave.
type dpopKey struct {
	key *ecdsa.PrivateKey
	jwk map[string]any
	jkt string // the thumbprint of jwk

	mu     sync.Mutex
	nonces map[string]string
}

// Format prints "[redacted]": the key is never printed, even inside an
// Authorizer.
func (*dpopKey) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

func newDPoPKey() (*dpopKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("oauth: DPoP key: %w", err)
	}
	jwk, err := publicJWK(k)
	if err != nil {
		return nil, err
	}
	// encoding/json writes the members sorted, as RFC 7638 hashes them.
	b, err := json.Marshal(jwk)
	if err != nil {
		return nil, fmt.Errorf("oauth: DPoP key: %w", err)
	}
	sum := sha256.Sum256(b)
	return &dpopKey{key: k, jwk: jwk, jkt: b64(sum[:]), nonces: map[string]string{}}, nil
}

// maxNonce bounds a server's DPoP-Nonce.
const maxNonce = 1024

// noteNonce keeps the nonce a server at u sent ("" keeps the last one).
func (k *dpopKey) noteNonce(u *url.URL, nonce string) {
	if nonce == "" || len(nonce) > maxNonce {
		return
	}
	k.mu.Lock()
	k.nonces[origin.Of(u)] = nonce
	k.mu.Unlock()
}

func (k *dpopKey) nonce(u *url.URL) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.nonces[origin.Of(u)]
}

// proof returns a fresh DPoP proof (RFC 9449 §4.2) of a method request to
// u: htm, htu (u without query and fragment), iat, a new jti, the server's
// nonce when it gave one, and ath when the request carries token.
func (k *dpopKey) proof(method string, u *url.URL, token string, now time.Time) (string, error) {
	htu := *u
	htu.RawQuery, htu.Fragment, htu.RawFragment, htu.User = "", "", "", nil
	claims := map[string]any{"htm": method, "htu": htu.String(), "iat": now.Unix(), "jti": randomString()}
	if n := k.nonce(u); n != "" {
		claims["nonce"] = n
	}
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		claims["ath"] = b64(sum[:])
	}
	return signJWT(k.key, map[string]any{"typ": "dpop+jwt", "jwk": k.jwk}, claims)
}

// dpopTokenRequest is a token request with a DPoP proof, sent once more
// with a fresh proof when the server asks for its nonce (use_dpop_nonce,
// RFC 9449 §8).
func (a *Authorizer) dpopTokenRequest(ctx context.Context, meta *ServerMetadata, client Registration, form url.Values, step string, v any, scrub ...string) error {
	u, err := url.Parse(meta.TokenEndpoint)
	if err != nil {
		return fmt.Errorf("%w: token endpoint: %v", ErrMetadata, err)
	}
	for attempt := 0; ; attempt++ {
		before := a.dpop.nonce(u)
		p, err := a.dpop.proof(http.MethodPost, u, "", time.Now())
		if err != nil {
			return err
		}
		h := http.Header{}
		h.Set("DPoP", p)
		err = a.tokenRequest(ctx, meta, client, form, h, step, v, scrub...)
		var oe *OAuthError
		if attempt == 0 && errors.As(err, &oe) && oe.Code == "use_dpop_nonce" && a.dpop.nonce(u) != before {
			a.log.Debug("oauth: token endpoint wants a DPoP nonce; sending again", "step", step)
			continue
		}
		return err
	}
}

// Authorize sets the Authorization header of req for token, the token
// Token returned: "Bearer <token>", or for a DPoP-bound token
// "DPoP <token>" with a fresh proof in the DPoP header. It implements
// mcp.ProofCredentials.
func (a *Authorizer) Authorize(req *http.Request, token string) error {
	t := a.current()
	if a.dpop == nil || t == nil || string(t.AccessToken) != token || t.Type != "DPoP" {
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Del("DPoP")
		return nil
	}
	p, err := a.dpop.proof(req.Method, req.URL, token, time.Now())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "DPoP "+token)
	req.Header.Set("DPoP", p)
	return nil
}

// Answered is told of every answer of the MCP server: it keeps the
// server's DPoP nonce, and reports whether the answer is a 401 asking for
// that nonce (error="use_dpop_nonce", RFC 9449 §9), which the request,
// sent again with a fresh proof, answers. It implements
// mcp.ProofCredentials.
func (a *Authorizer) Answered(resp *http.Response) bool {
	if a.dpop == nil || resp.Request == nil {
		return false
	}
	a.dpop.noteNonce(resp.Request.URL, resp.Header.Get("DPoP-Nonce"))
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("DPoP-Nonce") == "" {
		return false
	}
	cs, _ := ParseChallenges(strings.Join(resp.Header.Values("Www-Authenticate"), ", "))
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "DPoP") && c.Param("error") == "use_dpop_nonce" {
			return true
		}
	}
	return false
}
