package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"git.rickub.com/bots-garden/mini-me/permission"
)

// The keys of each mapping, in the order the docs of Config, Server and
// Auth document them.
var (
	rootKeys   = []string{"mcp", "skills"}
	mcpKeys    = []string{"permissions", "sampling", "confirmDestructive", "roots", "servers"}
	serverKeys = []string{"name", "url", "command", "args", "env", "dir", "auth", "insecureHttp", "headers",
		"tools", "prompts", "resources", "skills", "permissions", "sampling", "confirmDestructive", "timeout", "connectTimeout", "egress", "tasks", "roots", "protocolVersion"}
	authKeys = []string{"type", "tokenEnv", "header", "grant", "clientId", "clientSecretEnv", "clientSecretFile",
		"clientKeyEnv", "clientKeyFile", "assertionFile", "assertionCommand", "idpTokenEndpoint", "idpClientId",
		"idpClientSecretEnv", "issuer", "scopes", "redirectUrl", "tokenEndpointAuth", "dpop"}
	// oauthKeys are only for auth.type oauth, tokenKeys never for it.
	oauthKeys = authKeys[3:]
	tokenKeys = []string{"tokenEnv", "header"}

	// Keys that only make sense with one transport.
	stdioKeys = []string{"args", "env", "dir"}
	httpKeys  = []string{"auth", "insecureHttp", "headers"}
)

// config decodes the root node of the document; nil is an empty file.
func (d *decoder) config(root *yaml.Node) *Config {
	cfg := &Config{File: d.file, Permissions: permission.ModeAsk, Sampling: permission.ModeAsk, ConfirmDestructive: true}
	if root == nil || isNull(root) {
		return cfg
	}
	top, ok := d.fields(root, "", rootKeys)
	if !ok {
		return cfg
	}
	if e, ok := top["skills"]; ok {
		cfg.Skills = d.skillFolders(e.val, "skills")
	}
	e, ok := top["mcp"]
	if !ok || isNull(e.val) {
		return cfg
	}
	m, ok := d.fields(e.val, "mcp", mcpKeys)
	if !ok {
		return cfg
	}
	if e, ok := m["permissions"]; ok {
		cfg.Permissions = oneOf(d, e.val, "mcp.permissions", "permission mode", permission.ModeAsk, permission.ModeAuto)
	}
	if e, ok := m["sampling"]; ok {
		cfg.Sampling = oneOf(d, e.val, "mcp.sampling", "sampling mode", permission.ModeAsk, permission.ModeAuto)
	}
	if e, ok := m["confirmDestructive"]; ok {
		cfg.ConfirmDestructive = d.boolean(e.val, "mcp.confirmDestructive")
	}
	if e, ok := m["roots"]; ok {
		cfg.Roots = d.roots(e.val, "mcp.roots")
	}
	if e, ok := m["servers"]; ok && !isNull(e.val) {
		cfg.Servers = d.servers(e.val, cfg)
	}
	return cfg
}

func (d *decoder) servers(n *yaml.Node, cfg *Config) []Server {
	if !d.is(n, yaml.SequenceNode, "mcp.servers", "a list of servers") {
		return nil
	}
	var out []Server
	byName := make(map[string]int, len(n.Content)) // lower-case name -> index
	for i, item := range n.Content {
		field := fmt.Sprintf("mcp.servers[%d]", i)
		s, nameNode := d.server(item, field, cfg)
		if nameNode != nil {
			// Names are compared ignoring case: "GitHub_x" and "github_x"
			// would confuse a model and the person reading the log.
			lower := strings.ToLower(s.Name)
			if j, dup := byName[lower]; dup {
				d.report(nameNode, field+".name", "duplicate server name %s (mcp.servers[%d] at line %d; names are compared ignoring case)",
					quote(s.Name), j, n.Content[j].Line)
			} else {
				byName[lower] = i
			}
		}
		out = append(out, s)
	}
	return out
}

// server decodes one server entry. It returns the node of a valid name, nil
// when the name is missing or invalid.
func (d *decoder) server(n *yaml.Node, field string, cfg *Config) (Server, *yaml.Node) {
	s := Server{
		Line:               n.Line,
		Permissions:        cfg.Permissions,
		Sampling:           cfg.Sampling,
		ConfirmDestructive: cfg.ConfirmDestructive,
		Egress:             EgressAny,
		Roots:              cfg.Roots,
	}
	f, ok := d.fields(n, field, serverKeys)
	if !ok {
		return s, nil
	}
	sub := func(key string) string { return field + "." + key }

	var nameNode *yaml.Node
	if e, ok := f["name"]; !ok {
		d.report(n, field, "missing name")
	} else if v, ok := d.required(e.val, sub("name")); ok {
		if msg := nameProblem(v); msg != "" {
			d.report(e.val, sub("name"), "%s", msg)
		} else {
			s.Name, nameNode = v, e.val
		}
	}

	u, hasURL := f["url"]
	c, hasCommand := f["command"]
	switch {
	case hasURL && hasCommand:
		d.report(c.key, sub("command"), "url and command are mutually exclusive (url for an HTTP server, command for a stdio server)")
	case !hasURL && !hasCommand:
		d.report(n, field, "missing url or command (url for an HTTP server, command for a stdio server)")
	case hasURL:
		d.misplaced(f, field, stdioKeys, "only for stdio servers (with command)")
	case hasCommand:
		d.misplaced(f, field, httpKeys, "only for HTTP servers (with url); give a stdio server its secrets through env")
	}
	if hasURL {
		if v, ok := d.required(u.val, sub("url")); ok {
			if msg := urlProblem(v); msg != "" {
				d.report(u.val, sub("url"), "%s", msg)
			}
			s.URL = v
		}
	}
	if hasCommand {
		s.Command = d.osString(c.val, sub("command"))
	}
	if e, ok := f["args"]; ok {
		d.list(e.val, sub("args"), func(a, at string, item *yaml.Node) {
			if hasNUL(a) {
				d.report(item, at, "must not contain a NUL byte")
			}
			s.Args = append(s.Args, a)
		})
	}
	if e, ok := f["env"]; ok {
		s.Env = d.env(e.val, sub("env"))
	}
	if e, ok := f["dir"]; ok {
		s.Dir = d.osString(e.val, sub("dir"))
	}
	if e, ok := f["insecureHttp"]; ok {
		s.InsecureHTTP = d.boolean(e.val, sub("insecureHttp"))
	}
	if e, ok := f["auth"]; ok {
		s.Auth = d.auth(e.val, sub("auth"), s.InsecureHTTP)
	}
	if hasURL && s.Auth != nil && !s.InsecureHTTP && plainOffLoopback(s.URL) {
		d.report(u.val, sub("url"), "plain http to a host that is not loopback, with auth: the credentials would cross the network in clear; use https (or, on a private network without TLS, set insecureHttp: true)")
	}
	if e, ok := f["insecureHttp"]; ok && s.Auth == nil && hasURL {
		d.report(e.key, sub("insecureHttp"), "insecureHttp is only for a server with auth")
	}
	if e, ok := f["headers"]; ok {
		s.Headers = d.headers(e.val, sub("headers"), s.Auth)
	}
	if e, ok := f["tools"]; ok {
		s.Tools = d.tools(e.val, sub("tools"))
	}
	if e, ok := f["prompts"]; ok {
		s.Prompts = d.uniqueNames(e.val, sub("prompts"), "prompt", "empty allowlist; remove prompts to allow every prompt of the server")
	}
	if e, ok := f["resources"]; ok {
		s.Resources = d.uniqueNames(e.val, sub("resources"), "resource", "empty allowlist; remove resources to allow every resource of the server")
	}
	if e, ok := f["skills"]; ok {
		s.Skills = d.skillAllowlist(e.val, sub("skills"))
	}
	if e, ok := f["permissions"]; ok {
		s.Permissions = oneOf(d, e.val, sub("permissions"), "permission mode", permission.ModeAsk, permission.ModeAuto)
	}
	if e, ok := f["sampling"]; ok {
		s.Sampling = oneOf(d, e.val, sub("sampling"), "sampling mode", permission.ModeAsk, permission.ModeAuto)
	}
	if e, ok := f["confirmDestructive"]; ok {
		s.ConfirmDestructive = d.boolean(e.val, sub("confirmDestructive"))
	}
	if e, ok := f["timeout"]; ok {
		s.Timeout = d.duration(e.val, sub("timeout"))
	}
	if e, ok := f["connectTimeout"]; ok {
		s.ConnectTimeout = d.duration(e.val, sub("connectTimeout"))
	}
	if e, ok := f["egress"]; ok {
		s.Egress = oneOf(d, e.val, sub("egress"), "egress", EgressAny, EgressLocal)
	}
	if e, ok := f["tasks"]; ok {
		s.Tasks = oneOf(d, e.val, sub("tasks"), "tasks setting", TasksOff, TasksRequired, TasksAllowed)
	}
	if e, ok := f["roots"]; ok {
		s.Roots = d.roots(e.val, sub("roots"))
	}
	if e, ok := f["protocolVersion"]; ok {
		s.ProtocolVersion = oneOf(d, e.val, sub("protocolVersion"), "protocol version", ProtocolVersions...)
	}
	return s, nameNode
}

// misplaced reports each of keys present in f, which the server's transport
// does not use.
func (d *decoder) misplaced(f map[string]entry, field string, keys []string, why string) {
	for _, k := range keys {
		if e, ok := f[k]; ok {
			d.report(e.key, field+"."+k, "%s is %s", k, why)
		}
	}
}

// osString decodes a non-empty string handed to the operating system (a
// command or a directory), which cannot hold a NUL byte.
func (d *decoder) osString(n *yaml.Node, field string) string {
	s, ok := d.required(n, field)
	if ok && hasNUL(s) {
		d.report(n, field, "must not contain a NUL byte")
	}
	return s
}

func (d *decoder) env(n *yaml.Node, field string) map[string]string {
	es, ok := d.entries(n, field, "a mapping of variable names to values")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		at := join(field, e.name)
		if !isEnvName(e.name) {
			d.report(e.key, at, "invalid variable name %s (want letters, digits and _, not starting with a digit)", quote(e.name))
		}
		// An empty value is meaningful: it sets the variable to "".
		v, ok := d.str(e.val, at)
		if ok && hasNUL(v) {
			d.report(e.val, at, "must not contain a NUL byte")
		}
		out[e.name] = v
	}
	return out
}

// auth decodes a server's auth; insecure is the server's insecureHttp.
func (d *decoder) auth(n *yaml.Node, field string, insecure bool) *Auth {
	f, ok := d.fields(n, field, authKeys)
	if !ok {
		return nil
	}
	a := &Auth{}
	if e, ok := f["type"]; ok {
		a.Type = oneOf(d, e.val, field+".type", "auth type", AuthBearer, AuthAPIKey, AuthOAuth)
	} else {
		d.report(n, field, "missing type (want bearer, apikey or oauth)")
	}
	if a.Type == AuthOAuth {
		d.misplaced(f, field, tokenKeys, "not for oauth auth, which gets its tokens itself")
		d.oauth(f, field, a, insecure)
		return a
	}
	d.misplaced(f, field, oauthKeys, "only for oauth auth")
	if e, ok := f["tokenEnv"]; ok {
		// The value is never repeated: a user may have pasted the token
		// itself here.
		if v, ok := d.required(e.val, field+".tokenEnv"); ok {
			if !isEnvName(v) {
				d.report(e.val, field+".tokenEnv", "not an environment variable name (want letters, digits and _, not starting with a digit): put the token in an environment variable and write that variable's name here")
			}
			a.TokenEnv = v
		}
	} else {
		d.report(n, field, "missing tokenEnv (the name of the environment variable that holds the token)")
	}
	e, hasHeader := f["header"]
	switch {
	case hasHeader && a.Type == AuthBearer:
		d.report(e.key, field+".header", "header is only for apikey auth (bearer always uses Authorization)")
	case hasHeader:
		if v, ok := d.required(e.val, field+".header"); ok {
			if msg := headerNameProblem(v); msg != "" {
				d.report(e.val, field+".header", "%s", msg)
			}
			a.Header = v
		}
	case a.Type == AuthAPIKey:
		a.Header = DefaultAPIKeyHeader
	}
	return a
}

// oauth decodes the keys of an oauth auth into a; insecure allows plain
// http endpoints off loopback.
func (d *decoder) oauth(f map[string]entry, field string, a *Auth, insecure bool) {
	sub := func(k string) string { return field + "." + k }
	if e, ok := f["clientId"]; ok {
		if v, ok := d.required(e.val, sub("clientId")); ok {
			if strings.HasPrefix(v, "http:") || strings.HasPrefix(v, "https:") {
				if u, err := url.Parse(v); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
					d.report(e.val, sub("clientId"), "a URL client id must be an https URL with a path (a Client ID Metadata Document)")
				}
			}
			a.ClientID = v
		}
	}
	var secret bool
	a.ClientSecretEnv, a.ClientSecretFile, secret = d.secretSource(f, field, "clientSecretEnv", "clientSecretFile", "the secret")
	if secret && (a.ClientID == "" || strings.HasPrefix(a.ClientID, "https:")) {
		d.report(first(f, "clientSecretEnv", "clientSecretFile").key, field, "a client secret needs the pre-registered clientId it belongs to")
	}
	a.Issuer = d.endpoint(f, field, "issuer", insecure)
	if e, ok := f["scopes"]; ok {
		seen := map[string]bool{}
		isList := d.list(e.val, sub("scopes"), func(v, at string, item *yaml.Node) {
			switch {
			case v == "" || strings.ContainsAny(v, " \t\"\\") || !isHeaderValue(v):
				d.report(item, at, "invalid scope %s (a scope has no spaces, quotes or backslashes)", quote(v))
			case seen[v]:
				d.report(item, at, "duplicate scope %s", quote(v))
			default:
				seen[v] = true
				a.Scopes = append(a.Scopes, v)
			}
		})
		if isList && len(e.val.Content) == 0 {
			d.report(e.val, sub("scopes"), "empty list of scopes (leave the key out to let the server decide)")
		}
	}
	if e, ok := f["redirectUrl"]; ok {
		if v, ok := d.required(e.val, sub("redirectUrl")); ok {
			if u, err := url.Parse(v); err != nil || !u.IsAbs() || u.Fragment != "" {
				d.report(e.val, sub("redirectUrl"), "not an absolute URL without a fragment")
			}
			a.RedirectURL = v
		}
	}
	key := d.machine(f, field, a, secret, insecure)
	d.bound(f, field, a)
	if e, ok := f["tokenEndpointAuth"]; ok {
		a.TokenEndpointAuth = oneOf(d, e.val, sub("tokenEndpointAuth"), "token endpoint auth method", TokenAuthBasic, TokenAuthPost, TokenAuthNone, TokenAuthPrivateKeyJWT)
		switch {
		case a.TokenEndpointAuth == TokenAuthNone && (secret || key):
			d.report(e.val, sub("tokenEndpointAuth"), "none sends no client secret or assertion, yet one is configured")
		case a.TokenEndpointAuth == TokenAuthPrivateKeyJWT && !key:
			d.report(e.val, sub("tokenEndpointAuth"), "%s needs a client key (clientKeyEnv or clientKeyFile)", a.TokenEndpointAuth)
		case (a.TokenEndpointAuth == TokenAuthBasic || a.TokenEndpointAuth == TokenAuthPost) && !secret:
			d.report(e.val, sub("tokenEndpointAuth"), "%s needs a client secret (clientSecretEnv or clientSecretFile)", a.TokenEndpointAuth)
		}
	}
	if e, ok := f["dpop"]; ok {
		a.DPoP = d.boolean(e.val, sub("dpop"))
	}
}

// machine decodes the keys of the machine grants into a, and reports
// whether a client key is configured; secret says a client secret is.
func (d *decoder) machine(f map[string]entry, field string, a *Auth, secret, insecure bool) (key bool) {
	sub := func(k string) string { return field + "." + k }
	grantAt := f["grant"].val
	if e, ok := f["grant"]; ok {
		a.Grant = oneOf(d, e.val, sub("grant"), "grant", GrantAuthorizationCode, GrantClientCredentials, GrantJWTBearer, GrantEnterpriseManaged)
	}
	if grantAt == nil {
		grantAt = f["type"].val
	}
	g := a.Grant
	if g == "" {
		g = GrantAuthorizationCode
	}
	only := func(k string, grants ...Grant) {
		if e, ok := f[k]; ok && !slices.Contains(grants, g) {
			names := make([]string, len(grants))
			for i, g := range grants {
				names[i] = string(g)
			}
			d.report(e.key, sub(k), "%s is only for the %s grant", k, strings.Join(names, " and "))
		}
	}
	only("clientKeyEnv", GrantClientCredentials)
	only("clientKeyFile", GrantClientCredentials)
	only("assertionFile", GrantJWTBearer, GrantEnterpriseManaged)
	only("assertionCommand", GrantJWTBearer, GrantEnterpriseManaged)
	only("idpTokenEndpoint", GrantEnterpriseManaged)
	only("idpClientId", GrantEnterpriseManaged)
	only("idpClientSecretEnv", GrantEnterpriseManaged)
	only("redirectUrl", GrantAuthorizationCode)

	a.ClientKeyEnv, a.ClientKeyFile, key = d.secretSource(f, field, "clientKeyEnv", "clientKeyFile", "the client's private key (PEM)")
	if key && secret {
		d.report(first(f, "clientKeyEnv", "clientKeyFile").key, field, "a client key and a client secret are mutually exclusive (private_key_jwt or a secret)")
	}
	if e, ok := f["assertionFile"]; ok {
		a.AssertionFile = d.osString(e.val, sub("assertionFile"))
	}
	if e, ok := f["assertionCommand"]; ok {
		d.list(e.val, sub("assertionCommand"), func(v, at string, item *yaml.Node) {
			if v == "" || hasNUL(v) {
				d.report(item, at, "must not be empty or contain a NUL byte")
			}
			a.AssertionCommand = append(a.AssertionCommand, v)
		})
		if e.val.Kind == yaml.SequenceNode && len(e.val.Content) == 0 {
			d.report(e.val, sub("assertionCommand"), "empty command (want [program, args...])")
		}
		if _, both := f["assertionFile"]; both {
			d.report(e.key, sub("assertionCommand"), "assertionFile and assertionCommand are mutually exclusive")
		}
	}
	a.IDPTokenEndpoint = d.endpoint(f, field, "idpTokenEndpoint", insecure)
	if e, ok := f["idpClientId"]; ok {
		a.IDPClientID, _ = d.required(e.val, sub("idpClientId"))
	}
	a.IDPClientSecretEnv, _, _ = d.secretSource(f, field, "idpClientSecretEnv", "", "the identity provider's client secret")

	assertion := a.AssertionFile != "" || len(a.AssertionCommand) > 0
	switch a.Grant {
	case GrantClientCredentials:
		if a.ClientID == "" || strings.HasPrefix(a.ClientID, "https:") {
			d.report(grantAt, field, "the client_credentials grant needs a pre-registered clientId")
		}
		if !secret && !key {
			d.report(grantAt, field, "the client_credentials grant needs a client secret (clientSecretEnv or clientSecretFile) or a client key (clientKeyEnv or clientKeyFile)")
		}
	case GrantJWTBearer:
		if !assertion {
			d.report(grantAt, field, "the jwt_bearer grant needs the workload's token: assertionFile or assertionCommand")
		}
	case GrantEnterpriseManaged:
		if !assertion {
			d.report(grantAt, field, "the enterprise_managed grant needs the user's ID token: assertionFile or assertionCommand")
		}
		if a.IDPTokenEndpoint == "" {
			d.report(grantAt, field, "the enterprise_managed grant needs idpTokenEndpoint (the identity provider's token endpoint)")
		}
	}
	return key
}

// endpoint decodes the URL of an authorization server (key in f), "" when
// absent: https, or http on a loopback host, or (insecure) any http.
func (d *decoder) endpoint(f map[string]entry, field, key string, insecure bool) string {
	e, ok := f[key]
	if !ok {
		return ""
	}
	v, ok := d.required(e.val, field+"."+key)
	if ok {
		switch msg := urlProblem(v); {
		case msg != "":
			d.report(e.val, field+"."+key, "%s", msg)
		case !insecure && plainOffLoopback(v):
			d.report(e.val, field+"."+key, "plain http to a host that is not loopback: tokens and secrets would cross the network in clear; use https (or, on a private network without TLS, set insecureHttp: true on the server)")
		}
	}
	return v
}

// credentialKeys are the keys of an oauth auth naming a credential that
// only its own authorization server may see.
var credentialKeys = []string{"clientSecretEnv", "clientSecretFile", "clientKeyEnv", "clientKeyFile", "assertionFile", "assertionCommand", "idpClientSecretEnv"}

// bound reports a credential configured without the issuer it belongs to:
// without one, whatever authorization server the MCP server names would
// receive it.
func (d *decoder) bound(f map[string]entry, field string, a *Auth) {
	if _, ok := f["issuer"]; ok {
		return
	}
	if e := first(f, credentialKeys...); e.key != nil {
		d.report(e.key, field, "%s needs issuer, the authorization server the credential belongs to: without it, any authorization server the MCP server names would receive it", e.key.Value)
	}
}

// first returns the entry of the first of keys present in f.
func first(f map[string]entry, keys ...string) entry {
	for _, k := range keys {
		if e, ok := f[k]; ok {
			return e
		}
	}
	return entry{}
}

// secretSource decodes a pair of keys naming a secret by environment
// variable (envKey) or by file (fileKey, "" for none), one at most, and
// reports whether either is set; what names the secret in messages.
func (d *decoder) secretSource(f map[string]entry, field, envKey, fileKey, what string) (env, file string, set bool) {
	envE, hasEnv := f[envKey]
	fileE, hasFile := f[fileKey]
	switch {
	case hasEnv && hasFile:
		d.report(fileE.key, field+"."+fileKey, "%s and %s are mutually exclusive", envKey, fileKey)
	case hasEnv:
		if v, ok := d.required(envE.val, field+"."+envKey); ok {
			if !isEnvName(v) {
				d.report(envE.val, field+"."+envKey, "not an environment variable name (want letters, digits and _, not starting with a digit): put %s in an environment variable and write that variable's name here", what)
			}
			env = v
		}
	case hasFile:
		file = d.osString(fileE.val, field+"."+fileKey)
	}
	return env, file, hasEnv || hasFile
}

// headers decodes the static headers; auth is the server's auth, whose
// header they must not set.
func (d *decoder) headers(n *yaml.Node, field string, auth *Auth) map[string]string {
	es, ok := d.entries(n, field, "a mapping of header names to values")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(es))
	first := make(map[string]int, len(es)) // lower-case name -> line
	for _, e := range es {
		at := join(field, e.name)
		lower := strings.ToLower(e.name)
		switch {
		case lower == "authorization":
			d.report(e.key, at, "Authorization must not be set in headers; use auth")
		case auth != nil && auth.Header != "" && lower == strings.ToLower(auth.Header):
			d.report(e.key, at, "header %s carries the token of auth; use auth", quote(e.name))
		default:
			if msg := headerNameProblem(e.name); msg != "" {
				d.report(e.key, at, "%s", msg)
			} else if line, dup := first[lower]; dup {
				d.report(e.key, at, "duplicate header (first set at line %d; header names ignore case)", line)
			}
		}
		first[lower] = e.key.Line
		v, ok := d.str(e.val, at)
		if ok && !isHeaderValue(v) {
			d.report(e.val, at, "header value must not contain control characters")
		}
		out[e.name] = v
	}
	return out
}

func (d *decoder) tools(n *yaml.Node, field string) []string {
	// An empty allowlist reads as "no tools" but nil means "all tools";
	// uniqueNames refuses the ambiguity.
	return d.uniqueNames(n, field, "tool", "empty allowlist; remove tools to allow every tool, or remove the server")
}
