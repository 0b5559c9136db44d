package config

import (
	"time"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// AuthType says how a token is sent to an HTTP server.
type AuthType string

const (
	// AuthBearer sends the token as "Authorization: Bearer <token>".
	AuthBearer AuthType = "bearer"
	// AuthAPIKey sends the token, as is, in the header named by
	// [Auth.Header].
	AuthAPIKey AuthType = "apikey"
	// AuthOAuth gets tokens by OAuth 2.1 (the MCP authorization flow): the
	// server's 401 starts an authorization in the user's browser.
	AuthOAuth AuthType = "oauth"
)

// Token endpoint authentication methods of [Auth.TokenEndpointAuth].
const (
	TokenAuthBasic = "client_secret_basic"
	TokenAuthPost  = "client_secret_post"
	TokenAuthNone  = "none"
	// TokenAuthPrivateKeyJWT signs an assertion with the client key
	// (RFC 7523 §2.2); client_credentials grant only.
	TokenAuthPrivateKeyJWT = "private_key_jwt"
)

// Grant says how an AuthOAuth auth obtains tokens.
type Grant string

// The grants of [Auth.Grant].
const (
	// GrantAuthorizationCode signs the user in through a browser (the
	// default).
	GrantAuthorizationCode Grant = "authorization_code"
	// GrantClientCredentials authenticates the program itself, with a
	// client secret or a client key.
	GrantClientCredentials Grant = "client_credentials"
	// GrantJWTBearer exchanges a JWT the platform issues to the workload
	// (workload identity federation, RFC 7523).
	GrantJWTBearer Grant = "jwt_bearer"
	// GrantEnterpriseManaged exchanges the user's ID token at the
	// enterprise identity provider for an authorization grant (ID-JAG),
	// then that grant for a token.
	GrantEnterpriseManaged Grant = "enterprise_managed"
)

// DefaultAPIKeyHeader is the header an apikey auth uses when the file names
// none.
const DefaultAPIKeyHeader = "X-API-Key"

// Egress says which models may see a server's tools.
type Egress string

const (
	// EgressAny lets any model, local or hosted, see the server's tools. It
	// is the default.
	EgressAny Egress = "any"
	// EgressLocal marks a local-only server: its tools, and what they
	// return, must never be sent to a hosted model.
	EgressLocal Egress = "local"
)

// Tasks says when a server's tools run as MCP tasks (long-running calls
// the client polls; see mcp.Options.Tasks).
type Tasks string

const (
	// TasksDefault, the key absent, leaves it to the host.
	TasksDefault Tasks = ""
	// TasksOff never calls the server's tools as tasks: a tool that can
	// only run as one is left out.
	TasksOff Tasks = "off"
	// TasksRequired calls a tool as a task when it requires one.
	TasksRequired Tasks = "required"
	// TasksAllowed also calls a tool as a task when it allows one.
	TasksAllowed Tasks = "allowed"
)

// ProtocolVersions are the revisions a server's protocolVersion may pin,
// newest first.
var ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}

// MaxNameLength is the longest server name accepted, in bytes. Tool names
// are exposed to the model as "{server}_{tool}", which models cap at 64
// characters; a short server name leaves room for the tool's own name.
const MaxNameLength = 32

// MaxFileSize is the largest configuration accepted, in bytes.
const MaxFileSize = 1 << 20

// Config is a validated configuration with every default filled in.
//
// A Config is plain data: it is safe for concurrent reads, and a caller that
// modifies it must synchronise that itself.
//
// # Format
//
// A complete file, every key used:
//
//	mcp:
//	  permissions: ask
//	  sampling: ask
//	  confirmDestructive: true
//	  roots: [/home/me/projects/site]
//	  servers:
//	    - name: github
//	      url: https://api.githubcopilot.com/mcp/
//	      auth:
//	        type: bearer
//	        tokenEnv: GITHUB_PERSONAL_ACCESS_TOKEN
//	      headers:
//	        X-MCP-Toolsets: repos,issues
//	      tools: [get_me, list_repositories, search_code]
//	      skills: [code-review]
//	      permissions: auto
//	      sampling: ask
//	      confirmDestructive: true
//	      timeout: 30s
//	      connectTimeout: 10s
//	      egress: any
//	      tasks: required
//	      roots: [file:///home/me/projects/site, /home/me/notes]
//	      protocolVersion: 2025-11-25
//	    - name: search
//	      url: http://search.internal:8080/mcp
//	      insecureHttp: true
//	      auth:
//	        type: apikey
//	        tokenEnv: SEARCH_API_KEY
//	        header: X-Search-Key
//	    - name: linear
//	      url: https://mcp.linear.app/mcp
//	      auth:
//	        type: oauth
//	        clientId: https://agent.example.com/client-metadata.json
//	        scopes: [read, write]
//	        redirectUrl: http://127.0.0.1:8976/callback
//	    - name: crm
//	      url: https://crm.example.com/mcp
//	      auth:
//	        type: oauth
//	        clientId: mini-me-crm
//	        clientSecretEnv: CRM_CLIENT_SECRET
//	        issuer: https://login.example.com
//	        tokenEndpointAuth: client_secret_post
//	    - name: docs
//	      url: https://docs.example.com/mcp
//	      auth:
//	        type: oauth
//	        clientId: mini-me-docs
//	        clientSecretFile: /run/secrets/docs-client-secret
//	        issuer: https://login.example.com
//	    - name: nightly
//	      url: https://reports.example.com/mcp
//	      auth:
//	        type: oauth
//	        grant: client_credentials
//	        clientId: nightly-agent
//	        clientKeyFile: /run/secrets/nightly-agent.pem
//	        issuer: https://login.example.com
//	        tokenEndpointAuth: private_key_jwt
//	        dpop: true
//	    - name: billing
//	      url: https://billing.example.com/mcp
//	      auth:
//	        type: oauth
//	        grant: client_credentials
//	        clientId: billing-agent
//	        clientKeyEnv: BILLING_AGENT_KEY
//	        issuer: https://login.example.com
//	    - name: builds
//	      url: https://ci.example.com/mcp
//	      auth:
//	        type: oauth
//	        grant: jwt_bearer
//	        assertionFile: /var/run/secrets/tokens/mcp-token
//	        issuer: https://ci.example.com/auth
//	    - name: wiki
//	      url: https://wiki.corp.example.com/mcp
//	      auth:
//	        type: oauth
//	        grant: enterprise_managed
//	        clientId: mini-me-wiki
//	        clientSecretEnv: WIKI_CLIENT_SECRET
//	        assertionCommand: [corp-sso, id-token]
//	        idpTokenEndpoint: https://sso.corp.example.com/oauth2/token
//	        idpClientId: mini-me
//	        idpClientSecretEnv: SSO_CLIENT_SECRET
//	        issuer: https://auth.wiki.corp.example.com
//	    - name: finance
//	      command: simpl-resultat
//	      args: ["--mcp"]
//	      env:
//	        LEDGER: ${HOME}/ledger.db
//	      dir: /srv/finance
//	      prompts: [monthly_report]
//	      resources: ["ledger://accounts", "ledger://accounts/{id}"]
//	      egress: local
//	skills:
//	  - ./skills
//
// The top level holds two keys:
//
//   - mcp: the settings below. An empty file, an empty mcp or an empty
//     servers is a valid configuration with no servers.
//   - skills: local skill folders, a non-empty list of paths without
//     duplicates. Each is a skill (a folder holding SKILL.md, named after
//     the skill) or a folder of such skill folders. Relative paths are
//     relative to the host's working directory.
//
// Keys under mcp:
//
//   - permissions: ask or auto (default ask), the mode of every server that
//     sets none. In ask mode the host approves each tool call; in auto mode
//     tools run without asking.
//   - sampling: ask or auto (default ask), the mode of every server's
//     sampling requests (a server asking for a completion by the host's
//     model, at the user's cost) when the server sets none. It does not
//     follow permissions: auto tools do not make sampling auto.
//   - confirmDestructive: true or false (default true), the value of every
//     server that sets none. When true, a tool annotated destructive is
//     asked even in auto mode.
//   - roots: the folders every server may see (MCP roots), a list of
//     absolute paths or file:// URIs of them, without duplicates; a
//     relative path, another scheme or a file URI of another host is an
//     error. A server's own roots replace them.
//   - servers: the list of servers.
//
// The keys of a server are documented on [Server], those of auth on [Auth].
type Config struct {
	// File is the name the configuration was read from: the path given to
	// [Load], the name given to [Decode], or "<input>" for [Parse].
	File string
	// Permissions is the global mode, mcp.permissions (default permission.ModeAsk).
	// Each server's resolved mode is in [Server.Permissions].
	Permissions permission.Mode
	// Sampling is the global mode of the servers' sampling requests,
	// mcp.sampling (default permission.ModeAsk, whatever Permissions
	// says). Each server's resolved mode is in [Server.Sampling].
	Sampling permission.Mode
	// ConfirmDestructive is the global mcp.confirmDestructive (default
	// true). Each server's resolved value is in [Server.ConfirmDestructive].
	ConfirmDestructive bool
	// Servers lists the servers in file order. It is empty when the file
	// declares none.
	Servers []Server
	// Roots are the folders every server may see (mcp.roots), as file
	// URIs, in file order; a server's own list replaces them (Server.Roots
	// has it, or these).
	Roots []string
	// Skills lists the local skill folders (the top-level skills key), in
	// file order: each is a skill (a folder holding SKILL.md) or a folder
	// of skills. Paths are as written, relative ones to the working
	// directory.
	Skills []string
}

// Server is one MCP server of the configuration. Exactly one of URL and
// Command is set: URL for a Streamable HTTP server, Command for a stdio
// server.
//
// A Server is plain data, safe for concurrent reads.
//
// Keys of a server:
//
//   - name: required. 1 to 32 letters, digits, _ and -, unique in the file
//     ignoring case. Tools reach the model as "{name}_{tool}".
//   - url: the endpoint of a Streamable HTTP server: http or https, with a
//     host and without user:password@.
//   - command: the program of a stdio server, looked up in PATH when it has
//     no slash. Exactly one of url and command is required.
//   - args: the arguments of command, a list of strings (default none).
//   - env: variables added to command's environment, a mapping of names
//     ([A-Za-z_][A-Za-z0-9_]*) to strings. Values are kept raw: ${VAR}
//     references are expanded by the stdio transport, not here.
//   - dir: the working directory of command (default the host's). A
//     relative dir is relative to the host's working directory, not to the
//     file.
//   - auth: how to authenticate to url, a mapping of the keys below. With
//     auth, url must be https, or http to a loopback host (localhost,
//     127.0.0.0/8, ::1), or a unix socket: anything else is an error
//     unless insecureHttp is true.
//   - insecureHttp: true or false (default false), INSECURE: with auth,
//     allows a plain http url (and an oauth issuer and idpTokenEndpoint)
//     to a host that is not loopback, so that anyone on the network path
//     can read the token or secrets. Only for a private network without
//     TLS that you trust.
//   - headers: static, non-secret HTTP headers sent to url, a mapping of
//     header names to strings. Authorization, the apikey header and the
//     headers the transport sets (Accept, Content-Type, Mcp-Session-Id,
//     Mcp-Protocol-Version, ...) are refused: secrets go in auth.
//   - tools: an allowlist of tool names, non-empty and without duplicates.
//     Absent means every tool; an empty list is an error.
//   - prompts: an allowlist of the server's prompt names, strict like
//     tools. Absent means every prompt.
//   - resources: an allowlist of the server's resource URIs and resource
//     template URI templates, as the server lists them, strict like tools.
//     Absent means every resource and template.
//   - skills: an allowlist of the server's skill names (SEP-2640), strict
//     like tools. Absent means every skill the server lists.
//   - permissions: ask or auto, overriding mcp.permissions.
//   - sampling: ask or auto, overriding mcp.sampling.
//   - confirmDestructive: true or false, overriding mcp.confirmDestructive.
//   - timeout: a Go duration such as 30s, bounding each tool call (default
//     the transport's).
//   - connectTimeout: a Go duration bounding connection and tool discovery
//     (default the transport's).
//   - egress: any (default) or local. The tools of a local server, and what
//     they return, must never be sent to a hosted model.
//   - tasks: off, required or allowed: whether the server's tools run as
//     MCP tasks, never, when a tool requires it, or also when it allows it.
//     Absent leaves it to the host (mcp.Options.Tasks: by default, when a
//     tool requires it).
//   - roots: the folders this server may see, as mcp.roots; [] gives it
//     none.
//   - protocolVersion: 2026-07-28, 2025-11-25, 2025-06-18 or 2025-03-26,
//     to speak that revision with the server instead of detecting it.
//
// args, env and dir are only for stdio servers; auth, insecureHttp and
// headers only for HTTP servers.
type Server struct {
	// Name identifies the server and prefixes its tools' names. It matches
	// [A-Za-z0-9_-]{1,32} and is unique in its file, ignoring case.
	Name string
	// URL is the endpoint of a Streamable HTTP server, as written: an http
	// or https URL with a host and no user information.
	URL string
	// Command is the program of a stdio server, as written; the transport
	// looks it up in PATH when it has no slash.
	Command string
	// Args are the arguments passed to Command, as written.
	Args []string
	// Env holds variables added to the environment of Command. Values are
	// raw: references such as ${VAR} are left for the stdio transport to
	// expand.
	Env map[string]string
	// Dir is the working directory of Command, as written; empty means the
	// host's working directory.
	Dir string
	// Headers are static, non-secret HTTP headers sent with every request
	// to URL. Names are kept as written. Authorization and the auth header
	// never appear here.
	Headers map[string]string
	// Auth says how to authenticate to URL; nil means no authentication.
	Auth *Auth
	// InsecureHTTP is the server's insecureHttp key: with Auth, URL (and
	// an oauth auth's issuer and identity provider endpoint) may be plain
	// http to a host that is not loopback. INSECURE: anyone on the
	// network path reads the credentials; for a private network without
	// TLS only.
	InsecureHTTP bool
	// Tools is the allowlist of the server's tool names, in file order; nil
	// means every tool the server lists. It is never an empty, non-nil
	// slice.
	Tools []string
	// Prompts is the allowlist of the server's prompt names, in file
	// order; nil means every prompt the server lists. It is never an
	// empty, non-nil slice.
	Prompts []string
	// Resources is the allowlist of the server's resources, in file
	// order: resource URIs and resource template URI templates, each as
	// the server lists it; nil means every resource and template. It is
	// never an empty, non-nil slice.
	Resources []string
	// Skills is the allowlist of the server's skill names, in file order;
	// nil means every skill the server lists. It is never an empty,
	// non-nil slice.
	Skills []string
	// Permissions is the server's mode: its own permissions key, or else
	// the global [Config.Permissions].
	Permissions permission.Mode
	// Sampling is the mode of the server's sampling requests (the server
	// asking for a completion by the host's model): its own sampling key,
	// or else the global [Config.Sampling]. It does not follow
	// Permissions: a server whose tools run without asking still has its
	// sampling asked unless this says auto.
	Sampling permission.Mode
	// ConfirmDestructive is the server's own confirmDestructive key, or else
	// the global [Config.ConfirmDestructive]. When true, tools annotated
	// destructive are asked even in permission.ModeAuto.
	ConfirmDestructive bool
	// Timeout bounds each tool call; 0 means the transport's default.
	Timeout time.Duration
	// ConnectTimeout bounds connecting and discovering tools; 0 means the
	// transport's default.
	ConnectTimeout time.Duration
	// Egress says which models may see the server's tools (default
	// EgressAny).
	Egress Egress
	// ProtocolVersion pins the MCP revision spoken with the server (one
	// of ProtocolVersions) instead of detecting it: "2026-07-28" speaks
	// only the stateless revision, a legacy one skips the server/discover
	// probe. Empty detects it.
	ProtocolVersion string
	// Roots are the folders the server may see (MCP roots), as file URIs
	// (an absolute path or a file:// URI in the file): the server's roots
	// key, else mcp.roots; nil when neither is set, empty for roots: [].
	Roots []string
	// Tasks says when the server's tools run as MCP tasks; TasksDefault
	// leaves it to the host.
	Tasks Tasks
	// Line is the line of the server's entry in its file, for messages.
	Line int
}

// Stdio reports whether s is a stdio server (Command is set) rather than a
// Streamable HTTP server (URL is set).
func (s *Server) Stdio() bool { return s.Command != "" }

// Auth says how a token reaches an HTTP server. The token itself is never in
// the configuration: TokenEnv names the environment variable that holds it,
// which the transport reads when it connects. An AuthOAuth auth has no
// token: the OAuth fields say how the client gets one, and its secret, if
// any, is named by ClientSecretEnv or ClientSecretFile.
//
// An Auth is plain data, safe for concurrent reads.
//
// Keys of auth:
//
//   - type: required, bearer (sends "Authorization: Bearer <token>"),
//     apikey (sends the token as is in header) or oauth (gets tokens by the
//     MCP authorization flow, OAuth 2.1, when the server asks for them).
//   - tokenEnv: required for bearer and apikey, the NAME of the
//     environment variable holding the token ([A-Za-z_][A-Za-z0-9_]*). The
//     token is read when connecting, never by this package, and never
//     belongs in the file.
//   - header: apikey only, the header carrying the token (default
//     X-API-Key).
//
// The other keys are for oauth only, and all optional:
//
//   - clientId: a client id registered beforehand at the authorization
//     server, or an https URL with a path: the client's Client ID Metadata
//     Document. Without it the client registers itself (Dynamic Client
//     Registration).
//   - clientSecretEnv: the NAME of the environment variable holding the
//     secret of a pre-registered clientId.
//   - clientSecretFile: the path of a file holding that secret instead
//     (one of the two at most).
//   - issuer: the authorization server (its issuer identifier, https or
//     loopback http) the client's credentials belong to: no other server
//     ever sees them. Required with a credential (clientSecretEnv,
//     clientSecretFile, clientKeyEnv, clientKeyFile, assertionFile,
//     assertionCommand, idpClientSecretEnv, or a secret the host holds
//     in memory for the entry: toolset.Options.ClientSecrets), since
//     without it whatever authorization server the MCP server names would
//     receive it. With a
//     pre-registered clientId and no secret, it binds the id the same way
//     (elsewhere the client registers itself).
//   - scopes: the scopes to request when the server's challenge names
//     none, a non-empty list without duplicates (default: the server's
//     scopes_supported, or none).
//   - redirectUrl: the redirect URI, an absolute URL (default a loopback
//     URL the host's sign-in helper listens on).
//   - tokenEndpointAuth: client_secret_basic, client_secret_post, none or
//     private_key_jwt, forcing how the client authenticates at the token
//     endpoint (default: chosen from the server's metadata, private_key_jwt
//     with a client key); the first two need a secret, the last a key.
//   - grant: how tokens are obtained. authorization_code (the default)
//     signs the user in through a browser. The machine grants need no user:
//     client_credentials authenticates the program itself (a pre-registered
//     clientId with a secret or a key); jwt_bearer exchanges a JWT the
//     platform issues to the workload (workload identity federation, for
//     example a Kubernetes service account token); enterprise_managed
//     exchanges the user's ID token at the enterprise identity provider for
//     an authorization grant (ID-JAG), then that grant for a token.
//     redirectUrl is for authorization_code only.
//   - clientKeyEnv: client_credentials only, the NAME of the environment
//     variable holding the client's private key (PEM: P-256 ECDSA for
//     ES256, or RSA of 2048 bits or more for RS256), which signs its
//     private_key_jwt assertions; instead of a client secret.
//   - clientKeyFile: the path of a PEM file holding that key instead.
//   - assertionFile: jwt_bearer and enterprise_managed, required for them
//     unless assertionCommand is given: the path of the file holding the
//     JWT to exchange (the workload's token, or the user's ID token), read
//     again for every token request, so the platform may renew it.
//   - assertionCommand: a program and its arguments, [program, args...],
//     run for every token request, whose standard output is that JWT.
//   - idpTokenEndpoint: enterprise_managed only, required: the identity
//     provider's token endpoint, where the ID token is exchanged (https or
//     loopback http).
//   - idpClientId: the client's id at the identity provider.
//   - idpClientSecretEnv: the NAME of the environment variable holding the
//     client's secret at the identity provider (default: none sent).
//   - dpop: true binds tokens to a key pair made per run (DPoP, RFC 9449)
//     where the authorization server supports it: every request carries a
//     fresh proof, and a stolen token is useless without the key.
type Auth struct {
	// Type is AuthBearer, AuthAPIKey or AuthOAuth.
	Type AuthType
	// TokenEnv is the name of the environment variable holding the token.
	// It matches [A-Za-z_][A-Za-z0-9_]*. It is empty for AuthOAuth.
	TokenEnv string
	// Header is the header that carries the token of an AuthAPIKey auth
	// (default DefaultAPIKeyHeader). It is empty for AuthBearer, which always
	// uses Authorization.
	Header string

	// The fields below are for AuthOAuth only.

	// Grant is how tokens are obtained; empty means
	// GrantAuthorizationCode.
	Grant Grant

	// ClientID is a client id registered beforehand, or an https URL: the
	// client's Client ID Metadata Document. Empty means Dynamic Client
	// Registration.
	ClientID string
	// ClientSecretEnv names the environment variable holding the secret of
	// a pre-registered ClientID; empty for a public client.
	ClientSecretEnv string
	// ClientSecretFile is the path of a file holding that secret instead
	// (its content, surrounding white space trimmed), as written.
	ClientSecretFile string
	// ClientKeyEnv names the environment variable holding the client's
	// private key (PEM, P-256 or RSA) that signs its private_key_jwt
	// assertions; GrantClientCredentials only, instead of a secret.
	ClientKeyEnv string
	// ClientKeyFile is the path of a PEM file holding that key instead.
	ClientKeyFile string
	// AssertionFile is the path of the file holding the JWT to exchange,
	// read again for every token request: the workload's token
	// (GrantJWTBearer) or the user's ID token (GrantEnterpriseManaged).
	AssertionFile string
	// AssertionCommand is a program and its arguments that print that
	// JWT instead, run for every token request.
	AssertionCommand []string
	// IDPTokenEndpoint is the enterprise identity provider's token
	// endpoint (GrantEnterpriseManaged).
	IDPTokenEndpoint string
	// IDPClientID is the client's id at the identity provider.
	IDPClientID string
	// IDPClientSecretEnv names the environment variable holding the
	// client's secret at the identity provider; empty sends none.
	IDPClientSecretEnv string
	// DPoP binds tokens to a key (RFC 9449) where the authorization
	// server supports it.
	DPoP bool
	// Issuer, when set, binds ClientID and the client's credentials to
	// that authorization server; it is required with a credential (a
	// client secret or key, an assertion, the identity provider's secret).
	Issuer string
	// Scopes are requested when the server's challenge names none; nil
	// lets the server's metadata decide.
	Scopes []string
	// RedirectURL is the redirect URI of the authorization; empty means
	// the SDK's loopback default.
	RedirectURL string
	// TokenEndpointAuth forces the token endpoint authentication method:
	// TokenAuthBasic, TokenAuthPost, TokenAuthNone or (with a client key)
	// TokenAuthPrivateKeyJWT; empty chooses from the authorization
	// server's metadata.
	TokenEndpointAuth string
}
