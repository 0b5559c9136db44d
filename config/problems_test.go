package config_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"git.rickub.com/bots-garden/mini-me/config"
)

// problem is what a test expects of a config.Problem: its position and
// field exactly, and a part of its message.
type problem struct {
	line, col int
	field     string
	msg       string
}

// server1 opens a file whose first server starts on line 3, keys at column 7.
const server1 = "mcp:\n  servers:\n"

var problemTests = []struct {
	name string
	in   string
	want []problem
}{
	// The top level and mcp.
	{"unknown top-level key", "servers: []\n",
		[]problem{{1, 1, "servers", `unknown key "servers" (put it under mcp:)`}}},
	{"top level is a list", "- mcp\n",
		[]problem{{1, 1, "", "want a mapping, got a list"}}},
	{"mcp is a list", "mcp: [a]\n",
		[]problem{{1, 6, "mcp", "want a mapping, got a list"}}},
	{"unknown key under mcp", lines("mcp:", "  permission: ask"),
		[]problem{{2, 3, "mcp.permission", `unknown key "permission" (did you mean permissions?)`}}},
	{"snake_case key", lines("mcp:", "  confirm_destructive: true"),
		[]problem{{2, 3, "mcp.confirm_destructive", `unknown key "confirm_destructive" (did you mean confirmDestructive?)`}}},
	{"bad global mode", lines("mcp:", "  permissions: Auto"),
		[]problem{{2, 16, "mcp.permissions", `unknown permission mode "Auto" (want ask or auto)`}}},
	{"bad global sampling mode", lines("mcp:", "  sampling: yes"),
		[]problem{{2, 13, "mcp.sampling", `unknown sampling mode "yes" (want ask or auto)`}}},
	{"global confirmDestructive not a boolean", lines("mcp:", "  confirmDestructive: yes"),
		[]problem{{2, 23, "mcp.confirmDestructive", `want true or false, got "yes"`}}},
	{"global confirmDestructive missing", lines("mcp:", "  confirmDestructive:", "  permissions: ask"),
		[]problem{{2, 22, "mcp.confirmDestructive", "missing value (want true or false)"}}},
	{"servers is a mapping", lines("mcp:", "  servers: {a: b}"),
		[]problem{{2, 12, "mcp.servers", "want a list of servers, got a mapping"}}},
	{"long values are shortened", lines("mcp:", "  permissions: "+strings.Repeat("é", 100)),
		[]problem{{2, 16, "mcp.permissions", `unknown permission mode "` + strings.Repeat("é", 40) + `"... (want ask or auto)`}}},
	{"server is a string", lines("mcp:", "  servers: [github]"),
		[]problem{{2, 13, "mcp.servers[0]", "want a mapping, got a string"}}},

	// Names.
	{"missing name", server1 + "    - url: http://h/\n",
		[]problem{{3, 7, "mcp.servers[0]", "missing name"}}},
	{"empty name", server1 + lines(`    - name: ""`, "      command: x"),
		[]problem{{3, 13, "mcp.servers[0].name", "must not be empty"}}},
	{"null name", server1 + lines("    - name:", "      command: x"),
		[]problem{{3, 12, "mcp.servers[0].name", "missing value (want a string)"}}},
	{"name with a dot", server1 + lines("    - name: my.server", "      command: x"),
		[]problem{{3, 13, "mcp.servers[0].name", `invalid character '.' in name (want letters, digits, _ and -)`}}},
	{"name too long", server1 + lines("    - name: "+strings.Repeat("a", 33), "      command: x"),
		[]problem{{3, 13, "mcp.servers[0].name", "name is 33 bytes long (at most 32)"}}},
	{"duplicate name ignoring case", server1 + lines("    - {name: GitHub, command: x}", "    - {name: github, command: y}"),
		[]problem{{4, 14, "mcp.servers[1].name", `duplicate server name "github" (mcp.servers[0] at line 3; names are compared ignoring case)`}}},
	{"binary name", server1 + lines("    - name: !!binary YQ==", "      command: x"),
		[]problem{{3, 13, "mcp.servers[0].name", `want a string, got a value tagged "!!binary"`}}},

	// Transport.
	{"url and command", server1 + lines("    - name: a", "      url: http://h/", "      command: x"),
		[]problem{{5, 7, "mcp.servers[0].command", "url and command are mutually exclusive"}}},
	{"neither url nor command", server1 + "    - name: a\n",
		[]problem{{3, 7, "mcp.servers[0]", "missing url or command"}}},
	{"unsupported scheme", server1 + lines("    - name: a", "      url: ftp://h/"),
		[]problem{{4, 12, "mcp.servers[0].url", `unsupported URL scheme "ftp" (want http or https)`}}},
	{"no host", server1 + lines("    - name: a", "      url: https:///mcp"),
		[]problem{{4, 12, "mcp.servers[0].url", "URL has no host"}}},
	{"no scheme", server1 + lines("    - name: a", "      url: example.com/mcp"),
		[]problem{{4, 12, "mcp.servers[0].url", "URL has no scheme (want http or https)"}}},
	{"user information", server1 + lines("    - name: a", "      url: https://u:p@h/"),
		[]problem{{4, 12, "mcp.servers[0].url", "URL must not contain user information; use auth"}}},
	{"invalid URL", server1 + lines("    - name: a", "      url: http://h:port/"),
		[]problem{{4, 12, "mcp.servers[0].url", "invalid URL"}}},
	{"url is a list", server1 + lines("    - name: a", "      url: [http://h/]"),
		[]problem{{4, 12, "mcp.servers[0].url", "want a string, got a list"}}},
	{"empty command", server1 + lines("    - name: a", `      command: ""`),
		[]problem{{4, 16, "mcp.servers[0].command", "must not be empty"}}},
	{"custom tag", server1 + lines("    - name: a", "      command: !env X"),
		[]problem{{4, 16, "mcp.servers[0].command", `want a string, got a value tagged "!env"`}}},
	{"NUL in dir and args", server1 + lines("    - name: a", "      command: x", `      dir: "a\0b"`, `      args: [ok, "a\0"]`),
		[]problem{
			{5, 12, "mcp.servers[0].dir", "must not contain a NUL byte"},
			{6, 18, "mcp.servers[0].args[1]", "must not contain a NUL byte"},
		}},
	{"stdio keys with url", server1 + lines("    - name: a", "      url: http://h/", "      args: [x]", "      env: {A: b}", "      dir: /tmp"),
		[]problem{
			{5, 7, "mcp.servers[0].args", "args is only for stdio servers (with command)"},
			{6, 7, "mcp.servers[0].env", "env is only for stdio servers (with command)"},
			{7, 7, "mcp.servers[0].dir", "dir is only for stdio servers (with command)"},
		}},
	{"http keys with command", server1 + lines("    - name: a", "      command: x", "      auth: {type: bearer, tokenEnv: T}", "      headers: {X-A: b}"),
		[]problem{
			{5, 7, "mcp.servers[0].auth", "auth is only for HTTP servers (with url); give a stdio server its secrets through env"},
			{6, 7, "mcp.servers[0].headers", "headers is only for HTTP servers (with url)"},
		}},

	// Auth.
	{"unknown auth type", server1 + lines("    - name: a", "      command: x", "    - name: b", "      url: https://h/", "      auth: {type: oath, tokenEnv: T}"),
		[]problem{{7, 20, "mcp.servers[1].auth.type", `unknown auth type "oath" (want bearer, apikey or oauth)`}}},
	{"auth without type and tokenEnv", server1 + lines("    - name: a", "      url: https://h/", "      auth:", "        header: X-Key"),
		[]problem{
			{6, 9, "mcp.servers[0].auth", "missing type (want bearer, apikey or oauth)"},
			{6, 9, "mcp.servers[0].auth", "missing tokenEnv"},
		}},
	{"oauth with token keys", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, tokenEnv: T, header: X-Key}"),
		[]problem{
			{5, 27, "mcp.servers[0].auth.tokenEnv", "tokenEnv is not for oauth auth, which gets its tokens itself"},
			{5, 40, "mcp.servers[0].auth.header", "header is not for oauth auth"},
		}},
	{"oauth keys with bearer", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: bearer, tokenEnv: T, clientId: c, scopes: [x]}"),
		[]problem{
			{5, 41, "mcp.servers[0].auth.clientId", "clientId is only for oauth auth"},
			{5, 54, "mcp.servers[0].auth.scopes", "scopes is only for oauth auth"},
		}},
	{"oauth secret in two places", server1 + lines("    - name: a", "      url: https://h/", "      auth:", "        type: oauth", "        clientId: app",
		"        clientSecretEnv: S", "        clientSecretFile: /s", "        issuer: https://as"),
		[]problem{{9, 9, "mcp.servers[0].auth.clientSecretFile", "clientSecretEnv and clientSecretFile are mutually exclusive"}}},
	{"oauth secret without client id", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, clientSecretEnv: S, issuer: https://as}"),
		[]problem{{5, 27, "mcp.servers[0].auth", "a client secret needs the pre-registered clientId it belongs to"}}},
	{"oauth secret env not a name", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, clientId: app, clientSecretEnv: s3cr3t-value, issuer: https://as}"),
		[]problem{{5, 59, "mcp.servers[0].auth.clientSecretEnv", "not an environment variable name"}}},
	{"oauth client id document not https", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, clientId: http://h/doc.json}"),
		[]problem{{5, 37, "mcp.servers[0].auth.clientId", "a URL client id must be an https URL with a path"}}},
	{"oauth bad scopes", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, scopes: [read, read, \"a b\"]}"),
		[]problem{
			{5, 42, "mcp.servers[0].auth.scopes[1]", `duplicate scope "read"`},
			{5, 48, "mcp.servers[0].auth.scopes[2]", `invalid scope "a b"`},
		}},
	{"oauth empty scopes", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, scopes: []}"),
		[]problem{{5, 35, "mcp.servers[0].auth.scopes", "empty list of scopes"}}},
	{"oauth relative redirect", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, redirectUrl: /callback}"),
		[]problem{{5, 40, "mcp.servers[0].auth.redirectUrl", "not an absolute URL"}}},
	{"oauth auth method without secret", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, clientId: app, tokenEndpointAuth: client_secret_basic}"),
		[]problem{{5, 61, "mcp.servers[0].auth.tokenEndpointAuth", "client_secret_basic needs a client secret"}}},
	{"oauth unknown auth method", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, tokenEndpointAuth: tls_client_auth}"),
		[]problem{{5, 46, "mcp.servers[0].auth.tokenEndpointAuth", `unknown token endpoint auth method "tls_client_auth"`}}},
	{"oauth private_key_jwt without key", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: client_credentials, clientId: c, clientSecretEnv: S, tokenEndpointAuth: private_key_jwt, issuer: https://as}"),
		[]problem{{5, 106, "mcp.servers[0].auth.tokenEndpointAuth", "private_key_jwt needs a client key"}}},
	{"oauth unknown grant", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: password}"),
		[]problem{{5, 34, "mcp.servers[0].auth.grant", `unknown grant "password" (want authorization_code, client_credentials, jwt_bearer or enterprise_managed)`}}},
	{"oauth client credentials without credentials", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: client_credentials}"),
		[]problem{
			{5, 34, "mcp.servers[0].auth", "the client_credentials grant needs a pre-registered clientId"},
			{5, 34, "mcp.servers[0].auth", "needs a client secret (clientSecretEnv or clientSecretFile) or a client key"},
		}},
	{"oauth key and secret", server1 + lines("    - name: a", "      url: https://h/", "      auth:", "        type: oauth", "        grant: client_credentials",
		"        clientId: c", "        clientSecretEnv: S", "        clientKeyFile: /k.pem", "        issuer: https://as"),
		[]problem{{10, 9, "mcp.servers[0].auth", "a client key and a client secret are mutually exclusive"}}},
	{"oauth key env not a name", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: client_credentials, clientId: c, clientKeyEnv: \"-----BEGIN\", issuer: https://as}"),
		[]problem{{5, 81, "mcp.servers[0].auth.clientKeyEnv", "not an environment variable name"}}},
	{"oauth machine keys with the code grant", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, clientKeyFile: /k, assertionFile: /a, idpClientId: i, issuer: https://as}"),
		[]problem{
			{5, 27, "mcp.servers[0].auth.clientKeyFile", "clientKeyFile is only for the client_credentials grant"},
			{5, 46, "mcp.servers[0].auth.assertionFile", "assertionFile is only for the jwt_bearer and enterprise_managed grant"},
			{5, 65, "mcp.servers[0].auth.idpClientId", "idpClientId is only for the enterprise_managed grant"},
		}},
	{"oauth jwt bearer without assertion", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: jwt_bearer, redirectUrl: http://127.0.0.1/cb}"),
		[]problem{
			{5, 34, "mcp.servers[0].auth", "the jwt_bearer grant needs the workload's token: assertionFile or assertionCommand"},
			{5, 46, "mcp.servers[0].auth.redirectUrl", "redirectUrl is only for the authorization_code grant"},
		}},
	{"oauth assertion in two places", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: jwt_bearer, assertionFile: /a, assertionCommand: [], issuer: https://as}"),
		[]problem{
			{5, 65, "mcp.servers[0].auth.assertionCommand", "assertionFile and assertionCommand are mutually exclusive"},
			{5, 83, "mcp.servers[0].auth.assertionCommand", "empty command"},
		}},
	{"oauth enterprise without idp", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: enterprise_managed, assertionFile: /t, idpTokenEndpoint: ftp://idp/token, issuer: https://as}"),
		[]problem{{5, 91, "mcp.servers[0].auth.idpTokenEndpoint", ""}}},
	{"oauth dpop not a bool", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, dpop: yes}"),
		[]problem{{5, 33, "mcp.servers[0].auth.dpop", "want true or false"}}},
	{"auth over plain http off loopback", server1 + lines("    - name: a", "      url: http://h/mcp", "      auth: {type: bearer, tokenEnv: T}"),
		[]problem{{4, 12, "mcp.servers[0].url", "plain http to a host that is not loopback, with auth"}}},
	{"oauth over plain http off loopback", server1 + lines("    - name: a", "      url: http://10.0.0.7/mcp", "      auth: {type: oauth}"),
		[]problem{{4, 12, "mcp.servers[0].url", "set insecureHttp: true"}}},
	{"oauth issuer over plain http", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, issuer: http://as.example}"),
		[]problem{{5, 35, "mcp.servers[0].auth.issuer", "plain http to a host that is not loopback"}}},
	{"oauth idp endpoint over plain http", server1 + lines("    - name: a", "      url: https://h/",
		"      auth: {type: oauth, grant: enterprise_managed, assertionFile: /t, issuer: https://as, idpTokenEndpoint: http://idp.example/token}"),
		[]problem{{5, 111, "mcp.servers[0].auth.idpTokenEndpoint", "plain http to a host that is not loopback"}}},
	{"oauth client secret without issuer", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, clientId: app, clientSecretEnv: S}"),
		[]problem{{5, 42, "mcp.servers[0].auth", "clientSecretEnv needs issuer"}}},
	{"oauth client key without issuer", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: client_credentials, clientId: c, clientKeyFile: /k}"),
		[]problem{{5, 67, "mcp.servers[0].auth", "clientKeyFile needs issuer"}}},
	{"oauth workload assertion without issuer", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: oauth, grant: jwt_bearer, assertionCommand: [t]}"),
		[]problem{{5, 46, "mcp.servers[0].auth", "assertionCommand needs issuer"}}},
	{"insecureHttp without auth", server1 + lines("    - name: a", "      url: http://h/", "      insecureHttp: true"),
		[]problem{{5, 7, "mcp.servers[0].insecureHttp", "insecureHttp is only for a server with auth"}}},
	{"insecureHttp on a stdio server", server1 + lines("    - name: a", "      command: x", "      insecureHttp: true"),
		[]problem{{5, 7, "mcp.servers[0].insecureHttp", "insecureHttp is only for HTTP servers"}}},
	{"insecureHttp not a bool", server1 + lines("    - name: a", "      url: http://h/", "      insecureHttp: yes", "      auth: {type: bearer, tokenEnv: T}"),
		[]problem{{4, 12, "mcp.servers[0].url", "plain http"}, {5, 21, "mcp.servers[0].insecureHttp", "want true or false"}}},
	{"auth is a string", server1 + lines("    - name: a", "      url: https://h/", "      auth: bearer"),
		[]problem{{5, 13, "mcp.servers[0].auth", "want a mapping, got a string"}}},
	{"tokenEnv not a name", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: bearer, tokenEnv: 1TOKEN}"),
		[]problem{{5, 38, "mcp.servers[0].auth.tokenEnv", "not an environment variable name"}}},
	{"header with bearer", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: bearer, tokenEnv: T, header: X-Key}"),
		[]problem{{5, 41, "mcp.servers[0].auth.header", "header is only for apikey auth (bearer always uses Authorization)"}}},
	{"invalid apikey header", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: apikey, tokenEnv: T, header: X Key}"),
		[]problem{{5, 49, "mcp.servers[0].auth.header", `invalid header name "X Key"`}}},
	{"apikey header set by the transport", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: apikey, tokenEnv: T, header: content-type}"),
		[]problem{{5, 49, "mcp.servers[0].auth.header", `header "content-type" is set by the transport`}}},
	{"token in the file", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: bearer, tokenEnv: T, token: abc}"),
		[]problem{{5, 41, "mcp.servers[0].auth.token", "secrets do not belong in this file"}}},

	// Headers.
	{"headers", server1 + lines("    - name: a", "      url: https://h/", "      auth: {type: apikey, tokenEnv: K}",
		"      headers:",
		"        Authorization: Bearer x",
		"        x-api-key: k",
		"        bad header: v",
		"        content-type: text/plain",
		"        X-Trace: a",
		"        x-trace: b",
		`        X-Multi: "a\nb"`,
		"        X-List: [a]"),
		[]problem{
			{7, 9, "mcp.servers[0].headers.Authorization", "Authorization must not be set in headers; use auth"},
			{8, 9, "mcp.servers[0].headers.x-api-key", `header "x-api-key" carries the token of auth; use auth`},
			{9, 9, `mcp.servers[0].headers["bad header"]`, `invalid header name "bad header"`},
			{10, 9, "mcp.servers[0].headers.content-type", `header "content-type" is set by the transport`},
			{12, 9, "mcp.servers[0].headers.x-trace", "duplicate header (first set at line 11; header names ignore case)"},
			{13, 18, "mcp.servers[0].headers.X-Multi", "header value must not contain control characters"},
			{14, 17, "mcp.servers[0].headers.X-List", "want a string, got a list"},
		}},

	// Tools.
	{"tools is a string", server1 + lines("    - name: a", "      command: x", "      tools: get_me"),
		[]problem{{5, 14, "mcp.servers[0].tools", "want a list of strings, got a string"}}},
	{"empty allowlist", server1 + lines("    - name: a", "      command: x", "      tools: []"),
		[]problem{{5, 14, "mcp.servers[0].tools", "empty allowlist; remove tools to allow every tool"}}},
	{"empty skill allowlist", server1 + lines("    - name: a", "      command: x", "      skills: []"),
		[]problem{{5, 15, "mcp.servers[0].skills", "empty allowlist; remove skills to allow every skill"}}},
	{"duplicate skill", server1 + lines("    - name: a", "      command: x", "      skills: [pdf, pdf]"),
		[]problem{{5, 21, "mcp.servers[0].skills[1]", "duplicate skill \"pdf\""}}},
	{"empty prompt allowlist", server1 + lines("    - name: a", "      command: x", "      prompts: []"),
		[]problem{{5, 16, "mcp.servers[0].prompts", "empty allowlist; remove prompts to allow every prompt"}}},
	{"duplicate resource", server1 + lines("    - name: a", "      command: x", "      resources: [file:///a, file:///a]"),
		[]problem{{5, 30, "mcp.servers[0].resources[1]", "duplicate resource \"file:///a\""}}},
	{"empty skill folders", lines("skills: []"),
		[]problem{{1, 9, "skills", "empty list; remove skills"}}},
	{"skill folder not a string", lines("skills: [{a: b}]"),
		[]problem{{1, 10, "skills[0]", "want a string"}}},
	{"null allowlist", server1 + lines("    - name: a", "      command: x", "      tools:"),
		[]problem{{5, 13, "mcp.servers[0].tools", "missing value (want a list of strings)"}}},
	{"empty and duplicate tools", server1 + lines("    - name: a", "      command: x", `      tools: [a, "", a, {b: c}]`),
		[]problem{
			{5, 18, "mcp.servers[0].tools[1]", "must not be empty"},
			{5, 22, "mcp.servers[0].tools[2]", `duplicate tool "a" (first listed at line 5)`},
			{5, 25, "mcp.servers[0].tools[3]", "want a string, got a mapping"},
		}},

	// Modes, durations, egress.
	{"server mode", server1 + lines("    - name: a", "      command: x", "      permissions: always"),
		[]problem{{5, 20, "mcp.servers[0].permissions", `unknown permission mode "always" (want ask or auto)`}}},
	{"server sampling mode", server1 + lines("    - name: a", "      command: x", "      sampling: [auto]"),
		[]problem{{5, 17, "mcp.servers[0].sampling", "want ask or auto, got a list"}}},
	{"server confirmDestructive", server1 + lines("    - name: a", "      command: x", "      confirmDestructive: 1"),
		[]problem{{5, 27, "mcp.servers[0].confirmDestructive", `want true or false, got "1"`}}},
	{"durations", server1 + lines("    - {name: a, command: x, timeout: soon, connectTimeout: 0s}",
		"    - {name: b, command: x, timeout: 30, connectTimeout: -1s}"),
		[]problem{
			{3, 38, "mcp.servers[0].timeout", `bad duration "soon" (want a Go duration such as 30s or 1m30s)`},
			{3, 60, "mcp.servers[0].connectTimeout", `duration "0s" must be positive`},
			{4, 38, "mcp.servers[1].timeout", `bad duration "30"`},
			{4, 58, "mcp.servers[1].connectTimeout", `duration "-1s" must be positive`},
		}},
	{"null mode", server1 + lines("    - name: a", "      command: x", "      permissions:"),
		[]problem{{5, 19, "mcp.servers[0].permissions", "missing value (want ask or auto)"}}},
	{"egress", server1 + lines("    - name: a", "      command: x", "      egress: remote"),
		[]problem{{5, 15, "mcp.servers[0].egress", `unknown egress "remote" (want any or local)`}}},
	{"tasks", server1 + lines("    - name: a", "      command: x", "      tasks: always"),
		[]problem{{5, 14, "mcp.servers[0].tasks", `unknown tasks setting "always" (want off, required or allowed)`}}},

	// Env.
	{"env is a list", server1 + lines("    - name: a", "      command: x", "      env: [A=b]"),
		[]problem{{5, 12, "mcp.servers[0].env", "want a mapping of variable names to values, got a list"}}},
	{"env names and values", server1 + lines("    - name: a", "      command: x", "      env:", "        1X: a", "        B:", "        C-D: e"),
		[]problem{
			{6, 9, "mcp.servers[0].env.1X", `invalid variable name "1X"`},
			{7, 11, "mcp.servers[0].env.B", "missing value (want a string)"},
			{8, 9, "mcp.servers[0].env.C-D", `invalid variable name "C-D"`},
		}},

	// YAML itself.
	{"duplicate key", server1 + lines("    - name: a", "      command: x", "      name: b"),
		[]problem{{5, 7, "mcp.servers[0].name", "duplicate key (first set at line 3)"}}},
	{"null key", server1 + lines("    - {name: a, command: x, ~: v}"),
		[]problem{{3, 29, "mcp.servers[0]", "want a string key, got nothing"}}},
	{"merge key", server1 + lines("    - name: a", "      command: x", "      <<: {dir: /tmp}"),
		[]problem{{5, 7, "mcp.servers[0]", "merge keys (<<) are not supported"}}},
	{"alias", server1 + lines("    - name: a", "      command: x", "      args: &args [--mcp]", "    - name: b", "      command: y", "      args: *args"),
		[]problem{{8, 13, "mcp.servers[1].args", "aliases (*args) are not supported; write the value out"}}},
	// yaml.v3 puts parser errors at the start of the enclosing block; the
	// line must be the one of the mistake.
	{"key at the wrong indentation", lines("mcp:", "  servers:", "    - name: a", "   command: x"),
		[]problem{{4, 0, "", "malformed YAML: did not find expected key"}}},
	{"key dedented in a list", lines("mcp:", "  servers:", "    - name: a", "      command: x", "     dir: /"),
		[]problem{{5, 0, "", "malformed YAML: did not find expected '-' indicator"}}},
	{"unclosed bracket", lines("mcp:", "  servers:", "    - name: a", "      args: [a, b", "    - name: b"),
		[]problem{{4, 0, "", "malformed YAML: did not find expected ',' or ']'"}}},
	{"extra bracket before blank and comment lines", lines("mcp:", "  servers:", "    - name: a", "      tools: [a, b]]", "", "  # c", "      dir: x"),
		[]problem{{4, 0, "", "malformed YAML: did not find expected key"}}},
	{"unknown anchor", lines("mcp:", "  servers:", "    - name: a", "      tools: *nope", "      dir: x"),
		[]problem{{4, 0, "", "malformed YAML: unknown anchor 'nope' referenced"}}},
	{"unterminated string", lines("mcp:", "  servers:", "    - name: a", `      command: "x`, "", ""),
		[]problem{{4, 0, "", "malformed YAML: found unexpected end of stream"}}},
	{"colon in a plain value", lines("mcp:", "  servers:", "    - name: a", "      command: x: y"),
		[]problem{{4, 0, "", "malformed YAML: mapping values are not allowed in this context"}}},
	{"control character", "mcp: \x00\n",
		[]problem{{1, 0, "", "malformed YAML: control characters are not allowed"}}},
	{"tab indentation", lines("mcp:", "\tpermissions: ask"),
		[]problem{{2, 0, "", "malformed YAML: found character that cannot start any token"}}},
	{"CR line breaks", "mcp:\r  servers:\r    - name: a\r   command: x\r",
		[]problem{{4, 0, "", "malformed YAML: did not find expected key"}}},
	{"CR LF line breaks", "mcp:\r\n  servers:\r\n    - name: a\r\n   command: x\r\n",
		[]problem{{4, 0, "", "malformed YAML: did not find expected key"}}},
	{"NEL line breaks", "mcp:\u0085  servers:\u0085    - name: a\u0085   command: x\u0085",
		[]problem{{4, 0, "", "malformed YAML: did not find expected key"}}},
	{"two documents", lines("mcp:", "---", "mcp:"),
		[]problem{{2, 1, "", "more than one YAML document; want exactly one"}}},
	{"malformed second document", lines("mcp:", "  permissions: never", "---", "b: ["),
		[]problem{
			{2, 16, "mcp.permissions", `unknown permission mode "never"`},
			{4, 0, "", "malformed YAML: did not find expected node content"},
		}},
	{"typo in a key", server1 + lines("    - name: a", "      command: x", "      conectTimout: 1s"),
		[]problem{{5, 7, "mcp.servers[0].conectTimout", `unknown key "conectTimout" (did you mean connectTimeout?)`}}},
	{"no suggestion for a short unrelated key", server1 + lines("    - name: a", "      command: x", "      cwd: /"),
		[]problem{{5, 7, "mcp.servers[0].cwd", `unknown key "cwd"`}}},
	{"bad roots", lines("mcp:", "  roots:", "    - projects/site", "    - https://example.com/x", "    - file://server/share",
		"    - file:///a?b", "    - /srv/a", "    - file:///srv/a/", "    - \"\"", "  servers:", "    - name: a", "      command: x", "      roots: {a: b}"),
		[]problem{
			{3, 7, "mcp.roots[0]", "must be an absolute path or a file:// URI"},
			{4, 7, "mcp.roots[1]", "only folders of this machine"},
			{5, 7, "mcp.roots[2]", "not a file URI of an absolute path on this machine"},
			{6, 7, "mcp.roots[3]", "not a file URI of an absolute path on this machine"},
			{8, 7, "mcp.roots[5]", "duplicate root \"file:///srv/a/\" (first listed at line 7)"},
			{9, 7, "mcp.roots[6]", "must not be empty"},
			{13, 14, "mcp.servers[0].roots", "a list of strings"},
		}},
	{"unknown protocol version", server1 + lines("    - name: a", "      command: x", "      protocolVersion: 2024-11-05"),
		[]problem{{5, 24, "mcp.servers[0].protocolVersion", `unknown protocol version "2024-11-05"`}}},
}

func TestProblems(t *testing.T) {
	for _, tt := range problemTests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tt.in))
			if cfg != nil {
				t.Errorf("got a config %+v with the error", cfg)
			}
			var cerr *config.Error
			if !errors.As(err, &cerr) {
				t.Fatalf("got %v, want a *config.Error", err)
			}
			if cerr.File != "<input>" {
				t.Errorf("File = %q, want <input>", cerr.File)
			}
			if len(cerr.Problems) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%v", len(cerr.Problems), len(tt.want), err)
			}
			for i, w := range tt.want {
				p := cerr.Problems[i]
				if p.File != "<input>" || p.Line != w.line || p.Column != w.col || p.Field != w.field || !strings.Contains(p.Message, w.msg) {
					t.Errorf("problem %d:\n got %d:%d %q %q\nwant %d:%d %q containing %q", i, p.Line, p.Column, p.Field, p.Message, w.line, w.col, w.field, w.msg)
				}
				// The error text names the file, the position and the field.
				if !strings.Contains(err.Error(), "config: "+p.Error()) {
					t.Errorf("error text misses problem %d %q:\n%v", i, p.Error(), err)
				}
				if want := fmt.Sprintf("<input>:%d", w.line); !strings.HasPrefix(p.Error(), want) {
					t.Errorf("problem %d = %q, want it to start with %q", i, p.Error(), want)
				}
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// A file with many mistakes reports all of them, in file order.
func TestManyProblems(t *testing.T) {
	_, err := config.Load("testdata/many-problems.yaml")
	var cerr *config.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("got %v, want a *config.Error", err)
	}
	golden := "testdata/many-problems.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(err.Error()+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err2 := os.ReadFile(golden)
	if err2 != nil {
		t.Fatal(err2)
	}
	if got := err.Error() + "\n"; got != string(want) {
		t.Errorf("error text differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	if n := strings.Count(string(want), "\n"); len(cerr.Problems) != n {
		t.Errorf("got %d problems, want %d", len(cerr.Problems), n)
	}
	if !sort.SliceIsSorted(cerr.Problems, func(i, j int) bool { return cerr.Problems[i].Line < cerr.Problems[j].Line }) {
		t.Errorf("problems not in file order")
	}
}

// Malformed YAML far into a large file is still located on its line (the
// parser is first re-read in large chunks, then byte by byte near the end).
func TestMalformedFarIntoAFile(t *testing.T) {
	var b strings.Builder
	b.WriteString(server1)
	for i := 0; b.Len() < 200_000; i++ {
		fmt.Fprintf(&b, "    - name: s%d\n      command: x\n", i)
	}
	badLine := strings.Count(b.String(), "\n") + 1
	for _, bad := range []string{"     dir: /\n", "      tools: [a, b]]\n\n# end\n"} {
		_, err := config.Parse([]byte(b.String() + bad))
		var cerr *config.Error
		if !errors.As(err, &cerr) || len(cerr.Problems) != 1 || cerr.Problems[0].Line != badLine {
			t.Errorf("%q after %d lines: got %v, want one problem on line %d", bad, badLine-1, err, badLine)
		}
	}
}

func TestErrorWithoutProblems(t *testing.T) {
	// Only a caller can build an Error without problems; it still reads well.
	if got, want := (&config.Error{File: "a.yaml"}).Error(), "config: a.yaml: invalid configuration"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
