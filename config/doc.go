// Package config reads and validates the YAML file that lists the MCP
// servers a mini-me agent may use.
//
// [Load] reads a file, [Parse] a byte slice and [Decode] a reader. Each
// returns a [Config] with every default filled in, or an [*Error] listing
// every problem of the file at once, each with the file, line, column and
// path of the key concerned:
//
//	config: servers.yaml:7:15: mcp.servers[1].auth.type: unknown auth type "oath" (want bearer, apikey or oauth)
//
// Get the list with [errors.As]. The package never reads environment
// variables and never opens a connection; the functions are safe for
// concurrent use.
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
//
// # Strictness and limits
//
// Unknown keys, duplicate keys, values of the wrong type, empty strings
// (except args items and env values) and unknown values are errors. Numbers
// and booleans where a string is expected are taken as written, so
// args: [--port, 8080] passes "8080". Booleans are true or false only.
//
// A file holds one YAML document of at most [MaxFileSize] bytes. YAML
// aliases (*name) and merge keys (<<) are refused, so the configuration
// is exactly what the file shows and a small file cannot expand into a huge
// one.
//
// Messages repeat names, keys and enumerated values, shortened to 40
// characters, but never a URL, an argument, an env or header value, or the
// value of tokenEnv or clientSecretEnv, any of which may hold a secret.
package config
