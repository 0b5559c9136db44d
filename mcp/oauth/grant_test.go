package oauth_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

// machineAS is an authorization server (and the resource's metadata, and
// an identity provider's token endpoint) for the machine grants: it
// records every token request and answers with reply.
type machineAS struct {
	srv  *httptest.Server
	meta map[string]any // added to the metadata

	mu       sync.Mutex
	requests []*http.Request // bodies parsed into Form
	reply    func(r *http.Request) (status int, body map[string]any, header http.Header)
}

func newMachineAS(t *testing.T, meta map[string]any) *machineAS {
	t.Helper()
	m := &machineAS{meta: meta}
	m.reply = func(*http.Request) (int, map[string]any, http.Header) {
		return 200, map[string]any{"access_token": "at-" + randomHex(), "token_type": "Bearer", "expires_in": 3600}, nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		writeTestJSON(w, 200, map[string]any{"resource": m.srv.URL + "/mcp", "authorization_servers": []string{m.srv.URL}}, nil)
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		doc := map[string]any{"issuer": m.srv.URL, "token_endpoint": m.srv.URL + "/token"}
		for k, v := range m.meta {
			doc[k] = v
		}
		writeTestJSON(w, 200, doc, nil)
	})
	record := func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, r)
		reply := m.reply
		m.mu.Unlock()
		status, body, h := reply(r)
		writeTestJSON(w, status, body, h)
	}
	mux.HandleFunc("/token", record)
	mux.HandleFunc("/idp/token", record)
	m.srv = httptest.NewServer(mux)
	t.Cleanup(m.srv.Close)
	return m
}

func (m *machineAS) resource() string { return m.srv.URL + "/mcp" }

func (m *machineAS) got() []*http.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*http.Request(nil), m.requests...)
}

func writeTestJSON(w http.ResponseWriter, status int, v any, h http.Header) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorizeNow runs the authorization a server's 401 to the current token
// starts, and returns the new token.
func authorizeNow(t *testing.T, a *oauth.Authorizer) (string, error) {
	t.Helper()
	ctx := context.Background()
	sent, _ := a.Token(ctx)
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer error="invalid_token"`), sent); err != nil {
		return "", err
	}
	return a.Token(ctx)
}

// verifyJWS checks the signature of a compact JWS with pub and returns
// its header and claims.
func verifyJWS(t *testing.T, jws string, pub crypto.PublicKey) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(jws, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %d parts", len(parts))
	}
	dec := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("not base64url: %v", err)
		}
		return b
	}
	if err := json.Unmarshal(dec(parts[0]), &header); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(dec(parts[1]), &claims); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	sig := dec(parts[2])
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if header["alg"] != "ES256" || len(sig) != 64 ||
			!ecdsa.Verify(k, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Fatalf("ES256 signature does not verify (alg %v, %d bytes)", header["alg"], len(sig))
		}
	case *rsa.PublicKey:
		if header["alg"] != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) != nil {
			t.Fatalf("RS256 signature does not verify (alg %v)", header["alg"])
		}
	default:
		t.Fatalf("unknown key %T", pub)
	}
	return header, claims
}

func TestClientCredentialsSecretBasic(t *testing.T) {
	as := newMachineAS(t, map[string]any{"grant_types_supported": []string{"client_credentials"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "agent:1", ClientSecret: "s3cr:et", Scopes: []string{"read"}})
	tok, err := authorizeNow(t, a)
	if err != nil || !strings.HasPrefix(tok, "at-") {
		t.Fatalf("token %q, %v", tok, err)
	}
	reqs := as.got()
	if len(reqs) != 1 {
		t.Fatalf("%d token requests, want 1", len(reqs))
	}
	r := reqs[0]
	id, secret, ok := r.BasicAuth()
	if !ok || id != url.QueryEscape("agent:1") || secret != url.QueryEscape("s3cr:et") {
		t.Errorf("Basic credentials %q %q (%v), want the form-encoded id and secret", id, secret, ok)
	}
	want := map[string]string{"grant_type": "client_credentials", "resource": as.resource(), "scope": "read", "client_secret": "", "client_id": ""}
	for k, v := range want {
		if got := r.PostForm.Get(k); got != v {
			t.Errorf("form %s = %q, want %q", k, got, v)
		}
	}
}

func TestClientCredentialsRefusesUnofferedGrant(t *testing.T) {
	as := newMachineAS(t, map[string]any{"grant_types_supported": []string{"authorization_code"}})
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "agent", ClientSecret: "s"})
	_, err := authorizeNow(t, a)
	if !errors.Is(err, oauth.ErrMetadata) || !strings.Contains(err.Error(), "client_credentials") {
		t.Fatalf("err %v, want ErrMetadata naming the grant", err)
	}
	if n := len(as.got()); n != 0 {
		t.Errorf("%d token requests to a server that does not offer the grant", n)
	}
}

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs, _ := rsa.GenerateKey(rand.Reader, 2048)
	for _, key := range []crypto.Signer{ec, rs} {
		as := newMachineAS(t, map[string]any{"token_endpoint_auth_methods_supported": []string{"private_key_jwt"}})
		der, _ := x509.MarshalPKCS8PrivateKey(key)
		parsed, err := oauth.ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
		if err != nil {
			t.Fatal(err)
		}
		a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "nightly", ClientKey: parsed})
		before := time.Now().Unix()
		if _, err := authorizeNow(t, a); err != nil {
			t.Fatal(err)
		}
		// A second authorization: a new assertion, with a new jti.
		if _, err := authorizeNow(t, a); err != nil {
			t.Fatal(err)
		}
		reqs := as.got()
		if len(reqs) != 2 {
			t.Fatalf("%d token requests, want 2", len(reqs))
		}
		var jtis []any
		for _, r := range reqs {
			if _, _, basic := r.BasicAuth(); basic || r.PostForm.Has("client_secret") {
				t.Error("a private_key_jwt client sent a secret")
			}
			if got := r.PostForm.Get("client_assertion_type"); got != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
				t.Errorf("client_assertion_type %q", got)
			}
			_, c := verifyJWS(t, r.PostForm.Get("client_assertion"), key.Public())
			if c["iss"] != "nightly" || c["sub"] != "nightly" {
				t.Errorf("iss %v sub %v, want the client id", c["iss"], c["sub"])
			}
			aud, _ := c["aud"].([]any)
			if len(aud) != 2 || aud[0] != as.srv.URL || aud[1] != as.srv.URL+"/token" {
				t.Errorf("aud %v, want the issuer and the token endpoint", c["aud"])
			}
			iat, _ := c["iat"].(float64)
			exp, _ := c["exp"].(float64)
			if int64(iat) < before-1 || exp-iat != 60 {
				t.Errorf("iat %v exp %v: want now and a 60 s lifetime", iat, exp)
			}
			jtis = append(jtis, c["jti"])
		}
		if jtis[0] == nil || jtis[0] == jtis[1] {
			t.Errorf("jti %v: want a fresh one per assertion", jtis)
		}
	}
}

func TestParsePrivateKeyRefuses(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der384, _ := x509.MarshalECPrivateKey(p384)
	rsa1024, _ := rsa.GenerateKey(rand.Reader, 1024)
	tests := map[string]struct {
		pem  []byte
		want string
	}{
		"not PEM":     {[]byte("-----BEGIN nothing"), "no PEM block"},
		"public key":  {pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}}), "not a private key"},
		"garbage DER": {pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("secret-bytes")}), "not a valid key"},
		"P-384":       {pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der384}), "P-256"},
		"RSA 1024":    {pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsa1024)}), "2048"},
	}
	for name, tt := range tests {
		_, err := oauth.ParsePrivateKey(tt.pem)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret-bytes") {
			t.Errorf("%s: err %v, want one saying %q and quoting nothing", name, err, tt.want)
		}
	}
}

func TestJWTBearerRereadsAssertionAndNeverRetries(t *testing.T) {
	as := newMachineAS(t, map[string]any{"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"token_endpoint_auth_methods_supported": []string{"none"}})
	path := filepath.Join(t.TempDir(), "token")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.first.jwt")
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.JWTBearer{Assertion: oauth.AssertionFile(path)}})
	if _, err := authorizeNow(t, a); err != nil {
		t.Fatal(err)
	}
	write("a.second.jwt") // the platform renewed it
	if _, err := authorizeNow(t, a); err != nil {
		t.Fatal(err)
	}
	as.mu.Lock()
	as.reply = func(*http.Request) (int, map[string]any, http.Header) {
		return 400, map[string]any{"error": "invalid_grant", "error_description": "assertion a.second.jwt expired"}, nil
	}
	as.mu.Unlock()
	_, err := authorizeNow(t, a)
	var oe *oauth.OAuthError
	if !errors.As(err, &oe) || oe.Code != "invalid_grant" || !errors.Is(err, oauth.ErrToken) {
		t.Fatalf("err %v, want the server's invalid_grant", err)
	}
	if strings.Contains(err.Error(), "a.second.jwt") {
		t.Errorf("the error quotes the assertion: %v", err)
	}
	reqs := as.got()
	if len(reqs) != 3 {
		t.Fatalf("%d token requests, want 3 (the refusal not retried)", len(reqs))
	}
	for i, want := range []string{"a.first.jwt", "a.second.jwt", "a.second.jwt"} {
		f := reqs[i].PostForm
		if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || f.Get("assertion") != want || f.Get("resource") != as.resource() {
			t.Errorf("request %d: %v, want the jwt-bearer grant with %s", i, f, want)
		}
	}
}

func TestAssertionCommand(t *testing.T) {
	ctx := context.Background()
	jwt, err := oauth.AssertionCommand([]string{"sh", "-c", "echo h.p.s; echo noise >&2"})(ctx)
	if err != nil || jwt != "h.p.s" {
		t.Fatalf("%q, %v", jwt, err)
	}
	if _, err := oauth.AssertionCommand([]string{"sh", "-c", "echo not-a-jwt"})(ctx); err == nil || strings.Contains(err.Error(), "not-a-jwt") {
		t.Errorf("err %v, want a refusal that does not quote the output", err)
	}
	if _, err := oauth.AssertionCommand([]string{"sh", "-c", "exit 3"})(ctx); err == nil {
		t.Error("a failing command gave no error")
	}
}

func TestEnterpriseManagedExchange(t *testing.T) {
	as := newMachineAS(t, map[string]any{"grant_types_supported": []string{"urn:ietf:params:oauth:grant-type:jwt-bearer"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
	as.reply = func(r *http.Request) (int, map[string]any, http.Header) {
		if r.URL.Path == "/idp/token" {
			return 200, map[string]any{"access_token": "id.jag.jwt", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}, nil
		}
		return 200, map[string]any{"access_token": "at-ema", "token_type": "Bearer"}, nil
	}
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL,
		ClientID: "mcp-client", ClientSecret: "mcp-secret", Scopes: []string{"wiki.read"},
		Grant: oauth.EnterpriseManaged{
			IDToken:       func(context.Context) (oauth.Secret, error) { return "user.id.token", nil },
			TokenEndpoint: as.srv.URL + "/idp/token", ClientID: "idp-client",
		},
	})
	tok, err := authorizeNow(t, a)
	if err != nil || tok != "at-ema" {
		t.Fatalf("token %q, %v", tok, err)
	}
	reqs := as.got()
	if len(reqs) != 2 || reqs[0].URL.Path != "/idp/token" || reqs[1].URL.Path != "/token" {
		t.Fatalf("requests %v, want the IdP's token endpoint, then the AS's", reqs)
	}
	exchange := map[string]string{
		"grant_type":           "urn:ietf:params:oauth:grant-type:token-exchange",
		"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
		"subject_token":        "user.id.token",
		"subject_token_type":   "urn:ietf:params:oauth:token-type:id_token",
		"audience":             as.srv.URL,
		"resource":             as.resource(),
		"scope":                "wiki.read",
		"client_id":            "idp-client",
	}
	for k, v := range exchange {
		if got := reqs[0].PostForm.Get(k); got != v {
			t.Errorf("token exchange %s = %q, want %q", k, got, v)
		}
	}
	if _, _, basic := reqs[0].BasicAuth(); basic {
		t.Error("the MCP client's secret went to the identity provider")
	}
	f := reqs[1].PostForm
	if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || f.Get("assertion") != "id.jag.jwt" || f.Get("resource") != as.resource() {
		t.Errorf("jwt-bearer grant %v", f)
	}
	if id, secret, ok := reqs[1].BasicAuth(); !ok || id != "mcp-client" || secret != "mcp-secret" {
		t.Errorf("AS client authentication %q %q %v, want Basic", id, secret, ok)
	}
}

func TestEnterpriseManagedRefusesOtherTokenType(t *testing.T) {
	as := newMachineAS(t, nil)
	as.reply = func(*http.Request) (int, map[string]any, http.Header) {
		return 200, map[string]any{"access_token": "x.y.z", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}, nil
	}
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, ClientID: "c", Grant: oauth.EnterpriseManaged{
		IDToken:       func(context.Context) (oauth.Secret, error) { return "i.d.t", nil },
		TokenEndpoint: as.srv.URL + "/idp/token",
	}})
	if _, err := authorizeNow(t, a); !errors.Is(err, oauth.ErrToken) || !strings.Contains(err.Error(), "ID-JAG") {
		t.Fatalf("err %v, want ErrToken about the ID-JAG", err)
	}
	if n := len(as.got()); n != 1 {
		t.Errorf("%d requests, want the exchange alone", n)
	}
}

// TestMachineGrantRenewedOnceBeforeExpiry: a machine token about to expire
// is obtained again by Token itself, once for all concurrent callers.
func TestMachineGrantRenewedOnceBeforeExpiry(t *testing.T) {
	as := newMachineAS(t, nil)
	var n atomic.Int32
	as.reply = func(*http.Request) (int, map[string]any, http.Header) {
		exp := 3600
		if n.Add(1) == 1 {
			exp = 100 // renewed 10 s before its expiry
		}
		return 200, map[string]any{"access_token": fmt.Sprintf("at-%d", n.Load()), "token_type": "Bearer", "expires_in": exp}, nil
	}
	a := newAuthorizer(t, as.resource(), oauth.Config{Issuer: as.srv.URL, Grant: oauth.ClientCredentials{}, ClientID: "c", ClientSecret: "client-secret"})
	ctx := context.Background()
	clock := withClock(a)
	if err := a.Challenged(ctx, 401, challenge(t, `Bearer`), ""); err != nil {
		t.Fatal(err)
	}
	clock.advance(91 * time.Second)
	var wg sync.WaitGroup
	toks := make(chan string, 10)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, _ := a.Token(ctx)
			toks <- tok
		}()
	}
	wg.Wait()
	close(toks)
	for tok := range toks {
		if tok != "at-2" {
			t.Errorf("token %q, want the renewed at-2", tok)
		}
	}
	if got := len(as.got()); got != 2 {
		t.Errorf("%d token requests, want 2 (one renewal shared)", got)
	}
}

func TestClientKeyNeverPrinted(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, err := oauth.NewPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	cfg := oauth.Config{Issuer: "https://as.example", Grant: oauth.ClientCredentials{}, ClientID: "c", ClientKey: key, DPoP: true}
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "key", key, "cfg", cfg)
	out := fmt.Sprintf("%v %+v %#v %s %x %d", key, key, key, key, key, key) + fmt.Sprintf("%v %+v %#v", cfg, cfg, &cfg) + logged.String()
	for _, secret := range []string{ec.D.String(), ec.D.Text(16), base64.RawURLEncoding.EncodeToString(ec.D.Bytes())} {
		if strings.Contains(out, secret) {
			t.Fatalf("the private key was printed: %s", out)
		}
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("no [redacted] in %s", out)
	}
}
