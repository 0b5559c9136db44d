package oauth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// proofKey returns the public key of a DPoP proof's jwk header, checking
// it holds no private part, and its RFC 7638 thumbprint.
func proofKey(t *testing.T, proof string) (*ecdsa.PublicKey, string) {
	t.Helper()
	var h struct {
		Typ string            `json:"typ"`
		JWK map[string]string `json:"jwk"`
	}
	head, _ := base64.RawURLEncoding.DecodeString(strings.Split(proof, ".")[0])
	if err := json.Unmarshal(head, &h); err != nil {
		t.Fatal(err)
	}
	if h.Typ != "dpop+jwt" || h.JWK["kty"] != "EC" || h.JWK["crv"] != "P-256" || h.JWK["d"] != "" {
		t.Fatalf("proof header typ %q jwk %v: want dpop+jwt and a public P-256 key", h.Typ, h.JWK)
	}
	x, _ := base64.RawURLEncoding.DecodeString(h.JWK["x"])
	y, _ := base64.RawURLEncoding.DecodeString(h.JWK["y"])
	canon := `{"crv":"P-256","kty":"EC","x":"` + h.JWK["x"] + `","y":"` + h.JWK["y"] + `"}`
	sum := sha256.Sum256([]byte(canon))
	return &ecdsa.PublicKey{Curve: elliptic.P256(), X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)},
		base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestDPoPTokenRequestAndProofs(t *testing.T) {
	const asNonce = "as-nonce-1"
	as := newMachineAS(t, map[string]any{"dpop_signing_alg_values_supported": []string{"RS256", "ES256"}})
	as.reply = func(r *http.Request) (int, map[string]any, http.Header) {
		pub, _ := proofKey(t, r.Header.Get("DPoP"))
		_, c := verifyJWS(t, r.Header.Get("DPoP"), pub)
		if c["nonce"] != asNonce {
			return 400, map[string]any{"error": "use_dpop_nonce"}, http.Header{"Dpop-Nonce": {asNonce}}
		}
		return 200, map[string]any{"access_token": "dpop-bound", "token_type": "DPoP", "expires_in": 3600}, nil
	}
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "c", ClientSecret: "client-secret", DPoP: true})
	before := time.Now().Unix()
	tok, err := authorizeNow(t, a)
	if err != nil || tok != "dpop-bound" {
		t.Fatalf("token %q, %v", tok, err)
	}

	// The token requests: one refused for its nonce, one sent again with
	// it, each with a fresh proof of the token endpoint.
	reqs := as.got()
	if len(reqs) != 2 {
		t.Fatalf("%d token requests, want 2 (the nonce retried once)", len(reqs))
	}
	var jtis []any
	var jkt string
	for i, r := range reqs {
		if vs := r.Header.Values("DPoP"); len(vs) != 1 {
			t.Fatalf("request %d: %d DPoP headers, want 1", i, len(vs))
		}
		pub, thumb := proofKey(t, r.Header.Get("DPoP"))
		_, c := verifyJWS(t, r.Header.Get("DPoP"), pub)
		if c["htm"] != "POST" || c["htu"] != as.srv.URL+"/token" || c["ath"] != nil {
			t.Errorf("request %d: htm %v htu %v ath %v", i, c["htm"], c["htu"], c["ath"])
		}
		if iat, _ := c["iat"].(float64); int64(iat) < before-1 || int64(iat) > time.Now().Unix()+1 {
			t.Errorf("request %d: iat %v is not now", i, c["iat"])
		}
		if jkt != "" && thumb != jkt {
			t.Error("the key changed between token requests")
		}
		jkt = thumb
		jtis = append(jtis, c["jti"])
	}
	if jtis[0] == jtis[1] {
		t.Error("the retried token request reused its proof's jti")
	}

	// MCP requests: "Authorization: DPoP", a proof with ath and the
	// resource's URL without its query.
	proofOf := func(method, target string) map[string]any {
		req, _ := http.NewRequestWithContext(context.Background(), method, target, nil)
		if err := a.Authorize(req, tok); err != nil {
			t.Fatal(err)
		}
		if got := req.Header.Get("Authorization"); got != "DPoP dpop-bound" {
			t.Fatalf("Authorization %q, want the DPoP scheme", got)
		}
		pub, thumb := proofKey(t, req.Header.Get("DPoP"))
		if thumb != jkt {
			t.Error("the MCP request's proof key is not the token's")
		}
		_, c := verifyJWS(t, req.Header.Get("DPoP"), pub)
		return c
	}
	sum := sha256.Sum256([]byte("dpop-bound"))
	ath := base64.RawURLEncoding.EncodeToString(sum[:])
	c1 := proofOf(http.MethodPost, as.resource()+"?x=1#frag")
	// Nonces are kept per origin, and this resource shares the
	// authorization server's.
	if c1["htm"] != "POST" || c1["htu"] != as.resource() || c1["ath"] != ath || c1["nonce"] != asNonce {
		t.Errorf("proof claims %v: want htm POST, htu %s, ath %s and the origin's nonce", c1, as.resource(), ath)
	}

	// The resource asks for its nonce: Answered says send again, and the
	// next proof carries it, with a new jti.
	resp := &http.Response{StatusCode: 401, Request: &http.Request{URL: mustURL(t, as.resource())}, Header: http.Header{
		"Www-Authenticate": {`DPoP error="use_dpop_nonce", error_description="nonce required"`},
		"Dpop-Nonce":       {"rs-nonce-7"},
	}}
	if !a.Answered(resp) {
		t.Fatal("Answered ignored a use_dpop_nonce 401")
	}
	c2 := proofOf(http.MethodGet, as.resource())
	if c2["nonce"] != "rs-nonce-7" || c2["htm"] != "GET" || c2["jti"] == c1["jti"] {
		t.Errorf("proof after the nonce %v", c2)
	}
	resp.Header.Del("Www-Authenticate")
	resp.Header.Set("Www-Authenticate", `DPoP error="invalid_token"`)
	if a.Answered(resp) {
		t.Error("Answered asked to resend an invalid_token 401, which needs a new token")
	}
}

func TestDPoPOnlyWhereSupported(t *testing.T) {
	as := newMachineAS(t, nil) // no dpop_signing_alg_values_supported
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "c", ClientSecret: "client-secret", DPoP: true})
	tok, err := authorizeNow(t, a)
	if err != nil {
		t.Fatal(err)
	}
	if as.got()[0].Header.Get("DPoP") != "" {
		t.Error("a proof went to a server that does not support DPoP")
	}
	req, _ := http.NewRequest(http.MethodPost, as.resource(), nil)
	if err := a.Authorize(req, tok); err != nil {
		t.Fatal(err)
	}
	if req.Header.Get("Authorization") != "Bearer "+tok || req.Header.Get("DPoP") != "" {
		t.Errorf("Authorization %q DPoP %q, want a plain Bearer token", req.Header.Get("Authorization"), req.Header.Get("DPoP"))
	}
}

func TestDPoPTokenRefusedWithoutDPoP(t *testing.T) {
	as := newMachineAS(t, nil)
	as.reply = func(*http.Request) (int, map[string]any, http.Header) {
		return 200, map[string]any{"access_token": "x", "token_type": "DPoP"}, nil
	}
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "c", ClientSecret: "client-secret"})
	if _, err := authorizeNow(t, a); err == nil || !strings.Contains(err.Error(), "DPoP") {
		t.Fatalf("err %v, want a DPoP token refused by a client without a key", err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDPoPStoredTokenOfAnotherKey: a DPoP token in the store is bound to
// the key of the run that got it; another run gets its own token.
func TestDPoPStoredTokenOfAnotherKey(t *testing.T) {
	as := newMachineAS(t, map[string]any{"dpop_signing_alg_values_supported": []string{"ES256"}})
	as.reply = func(*http.Request) (int, map[string]any, http.Header) {
		return 200, map[string]any{"access_token": "bound-" + randomHex(), "token_type": "DPoP", "expires_in": 3600}, nil
	}
	store := &oauth.MemoryStore{}
	cfg := oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "c", ClientSecret: "client-secret", DPoP: true, Store: store}
	first, err := authorizeNow(t, newAuthorizer(t, as.resource(), cfg))
	if err != nil {
		t.Fatal(err)
	}
	second, err := authorizeNow(t, newAuthorizer(t, as.resource(), cfg))
	if err != nil {
		t.Fatal(err)
	}
	if first == second || len(as.got()) != 2 {
		t.Errorf("the second run used the first run's DPoP token (%d token requests)", len(as.got()))
	}
}

// TestDPoPNonceRetryNewAssertion: a token request sent again for the
// server's nonce carries a new client assertion too (a jti is used once).
func TestDPoPNonceRetryNewAssertion(t *testing.T) {
	as := newMachineAS(t, map[string]any{"dpop_signing_alg_values_supported": []string{"ES256"}})
	as.reply = func(r *http.Request) (int, map[string]any, http.Header) {
		if len(as.requests) == 1 {
			return 400, map[string]any{"error": "use_dpop_nonce"}, http.Header{"Dpop-Nonce": {"n"}}
		}
		return 200, map[string]any{"access_token": "bound", "token_type": "DPoP"}, nil
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := oauth.NewPrivateKey(ec)
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "c", ClientKey: key, DPoP: true})
	if _, err := authorizeNow(t, a); err != nil {
		t.Fatal(err)
	}
	reqs := as.got()
	if len(reqs) != 2 {
		t.Fatalf("%d token requests, want 2", len(reqs))
	}
	_, c1 := verifyJWS(t, reqs[0].PostForm.Get("client_assertion"), ec.Public())
	_, c2 := verifyJWS(t, reqs[1].PostForm.Get("client_assertion"), ec.Public())
	if c1["jti"] == c2["jti"] {
		t.Error("the retried request reused the client assertion")
	}
}
