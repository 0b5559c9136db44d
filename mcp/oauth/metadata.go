package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is the part of an OAuth 2.0 Protected Resource Metadata
// document (RFC 9728) the flow uses.
type ResourceMetadata struct {
	// Resource is the resource identifier: the MCP server's URL, or an
	// ancestor of it.
	Resource string `json:"resource"`
	// AuthorizationServers lists the issuers that grant tokens for it.
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported lists the scopes the resource knows.
	ScopesSupported []string `json:"scopes_supported"`
}

// ServerMetadata is the part of an authorization server's metadata
// (RFC 8414, or OpenID Connect discovery) the flow uses.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	// RevocationEndpoint revokes tokens (RFC 7009), for SignOut.
	RevocationEndpoint string `json:"revocation_endpoint"`
	// DPoPSigningAlgValuesSupported lists the DPoP proof algorithms the
	// server accepts (RFC 9449 §5.1); DPoP is used where it holds ES256.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported"`
	// ClientIDMetadataDocumentSupported says the server accepts an https
	// URL as client_id (a Client ID Metadata Document).
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported"`
	// IssParameterSupported says authorization responses carry iss
	// (RFC 9207).
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported"`
}

// maxMetadataSize bounds a metadata document or endpoint answer.
const maxMetadataSize = 1 << 20

// errNotFound says a metadata URL has no document: try the next one.
var errNotFound = errors.New("oauth: no metadata document")

// getJSON GETs u into v; a 4xx is errNotFound.
func (a *Authorizer) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMetadata, u, err)
	}
	if err := a.checkSecure(req.URL); err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("oauth: fetching %s: %w", u, unanswered(ctx, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return fmt.Errorf("%w: %s: http %d", errNotFound, u, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s: http %d", ErrMetadata, u, resp.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataSize)).Decode(v); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrMetadata, u, err)
	}
	return nil
}

// resourceMetadataURLs lists where the PRM of resource may be: the
// challenge's resource_metadata alone when it names one, else the
// path-based well-known URL, then the root one (RFC 9728 §3.1).
func resourceMetadataURLs(resource *url.URL, fromChallenge string) []string {
	if fromChallenge != "" {
		return []string{fromChallenge}
	}
	origin := resource.Scheme + "://" + resource.Host
	var out []string
	if p := strings.TrimSuffix(resource.EscapedPath(), "/"); p != "" {
		out = append(out, origin+"/.well-known/oauth-protected-resource"+p)
	}
	return append(out, origin+"/.well-known/oauth-protected-resource")
}

// discoverResource fetches the PRM of the server. It returns nil and a nil
// error when no URL has one (a 2025-03-26 server), and ErrMetadata when a
// document exists but is not the server's.
func (a *Authorizer) discoverResource(ctx context.Context, fromChallenge string) (*ResourceMetadata, error) {
	for _, u := range resourceMetadataURLs(a.resource, fromChallenge) {
		var m ResourceMetadata
		err := a.getJSON(ctx, u, &m)
		if errors.Is(err, errNotFound) {
			a.log.Debug("oauth: no resource metadata", "url", u)
			continue
		}
		if err != nil {
			return nil, err
		}
		if !covers(m.Resource, a.resource) {
			return nil, fmt.Errorf("%w: resource metadata at %s is for %q, not for %s: refusing to authorize", ErrMetadata, u, m.Resource, a.resource)
		}
		if len(m.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("%w: resource metadata at %s names no authorization server", ErrMetadata, u)
		}
		return &m, nil
	}
	return nil, nil
}

// covers reports whether the resource identifier id names server: the same
// URL, or an ancestor on the same origin (a path prefix ending at a
// segment boundary), as RFC 9728 §3.3 and RFC 8707 allow.
func covers(id string, server *url.URL) bool {
	r, err := url.Parse(id)
	if err != nil || r.Fragment != "" || r.RawQuery != "" || !strings.EqualFold(r.Scheme, server.Scheme) || !strings.EqualFold(r.Host, server.Host) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == sp || strings.HasPrefix(sp, rp+"/")
}

// serverMetadataURLs lists where the metadata of issuer may be, in the
// order the MCP specification gives: RFC 8414 path insertion, OpenID
// Connect path insertion, OpenID Connect path appending.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// discoverServer fetches and checks the metadata of issuer. With fallback
// (a 2025-03-26 server, no PRM) a server without metadata gets the default
// endpoints /authorize, /token and /register.
func (a *Authorizer) discoverServer(ctx context.Context, issuer string, fallback bool) (*ServerMetadata, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" || iu.Scheme != "https" && iu.Scheme != "http" {
		return nil, fmt.Errorf("%w: authorization server %q is not an http(s) URL", ErrMetadata, issuer)
	}
	if !secure(iu, a.cfg.InsecureHTTP) {
		return nil, fmt.Errorf("%w: authorization server %s is plain http off loopback: refusing to use it", ErrMetadata, clip(issuer, 200))
	}
	for _, u := range serverMetadataURLs(iu) {
		var m ServerMetadata
		err := a.getJSON(ctx, u, &m)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// RFC 8414 §3.3: identical, not merely equivalent.
		if m.Issuer != issuer {
			return nil, fmt.Errorf("%w: metadata at %s says issuer %q, want %q: refusing to use this authorization server", ErrIssuerMismatch, u, m.Issuer, issuer)
		}
		if err := m.check(a.cfg.Grant == nil, a.cfg.InsecureHTTP); err != nil {
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		return &m, nil
	}
	if !fallback {
		return nil, fmt.Errorf("%w: authorization server %s publishes no metadata", ErrMetadata, issuer)
	}
	base := strings.TrimSuffix(issuer, "/")
	return &ServerMetadata{
		Issuer:                        issuer,
		AuthorizationEndpoint:         base + "/authorize",
		TokenEndpoint:                 base + "/token",
		RegistrationEndpoint:          base + "/register",
		CodeChallengeMethodsSupported: []string{"S256"},
	}, nil
}

// check refuses metadata the flow cannot use safely; code says the
// authorization code flow will run (a machine grant needs neither an
// authorization endpoint nor PKCE), insecure that plain http is allowed
// off loopback (Config.InsecureHTTP).
func (m *ServerMetadata) check(code, insecure bool) error {
	switch {
	case m.TokenEndpoint == "":
		return fmt.Errorf("%w: authorization server %s has no token endpoint", ErrMetadata, m.Issuer)
	case code && m.AuthorizationEndpoint == "":
		return fmt.Errorf("%w: authorization server %s has no authorization endpoint", ErrMetadata, m.Issuer)
	case code && !slices.Contains(m.CodeChallengeMethodsSupported, "S256"):
		return fmt.Errorf("%w: authorization server %s does not support PKCE with S256: refusing to authorize", ErrMetadata, m.Issuer)
	}
	for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint, m.RevocationEndpoint} {
		if e == "" {
			continue
		}
		u, err := url.Parse(e)
		if err != nil || !secure(u, insecure) {
			return fmt.Errorf("%w: endpoint %q of %s is not https", ErrMetadata, e, m.Issuer)
		}
	}
	return nil
}
