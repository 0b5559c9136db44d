// oidc.mjs runs oidc-provider (a certified OpenID Connect / OAuth 2
// authorization server, installed by setup.sh) for the OAuth interop tests,
// configured as a real deployment protecting an MCP server would be:
//
//   - dynamic client registration, and the pre-registered clients of
//     OIDC_CLIENTS (a JSON array of client metadata);
//   - the authorization code flow with PKCE, and client credentials;
//   - refresh tokens, rotated on every use (reuse revokes the grant);
//     none at all with OIDC_NO_REFRESH=1;
//   - JWT access tokens (RS256) that live OIDC_TTL seconds, for any
//     resource indicator, with the resource scopes mcp:read and mcp:write
//     (a step-up asks for mcp:write);
//   - sign-in and consent approved at once: /interaction/<uid> logs the
//     user "user-1" in and grants every scope asked for, as a user who
//     clicks "allow" would;
//   - everything (clients, grants, tokens) in memory, so a restart forgets
//     it, as a server without persistence does; the signing keys are kept
//     in the file OIDC_JWKS (created when missing), so tokens issued before
//     a restart stay verifiable.
//
// GET /_events returns the provider's own events, in order: registrations,
// authorizations, token requests (grant.success and grant.error, with the
// grant type and client id) and grant revocations. The tests count from
// these records, not from what the client says it sent.
//
// It listens on 127.0.0.1:OIDC_PORT (0: a free port) and prints
// "oidc: issuer <url>" once it does. MINIME_NPM_DIR is the folder setup.sh
// installed the npm packages into.
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const env = process.env;
const { default: Provider } = await import(
  pathToFileURL(join(env.MINIME_NPM_DIR, "node_modules", "oidc-provider", "lib", "index.js")).href
);

function signingKeys(path) {
  if (existsSync(path)) return JSON.parse(readFileSync(path, "utf8"));
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwks = { keys: [{ ...privateKey.export({ format: "jwk" }), kid: "interop-1", alg: "RS256", use: "sig" }] };
  writeFileSync(path, JSON.stringify(jwks), { mode: 0o600 });
  return jwks;
}

const ttl = Number(env.OIDC_TTL || "60");
const noRefresh = env.OIDC_NO_REFRESH === "1";
const events = [];

console.log("oidc: provider loaded"); // start-up steps, for a start that stalls
const server = createServer();
await new Promise((resolve) => server.listen(Number(env.OIDC_PORT || "0"), "127.0.0.1", resolve));
console.log("oidc: listening");
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: JSON.parse(env.OIDC_CLIENTS || "[]"),
  scopes: ["openid", "offline_access", "mcp:read", "mcp:write"],
  jwks: signingKeys(env.OIDC_JWKS),
  cookies: { keys: ["interop-cookie-key"] },
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => ({
        audience: resource,
        scope: "mcp:read mcp:write",
        accessTokenTTL: ttl,
        accessTokenFormat: "jwt",
        jwt: { sign: { alg: "RS256" } },
      }),
    },
  },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: (_ctx, client) => !noRefresh && client.grantTypeAllowed("refresh_token"),
  ttl: { RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600, AuthorizationCode: 60 },
});
provider.proxy = false;

function record(name) {
  provider.on(name, (ctx, err) => {
    events.push({
      event: name,
      grant_type: ctx?.oidc?.params?.grant_type,
      client_id: ctx?.oidc?.client?.clientId,
      error: err?.error,
      at: Date.now(),
    });
  });
}
["registration_create.success", "authorization.success", "authorization.error", "grant.success", "grant.error", "grant.revoked"].forEach(record);

// approve logs "user-1" in and grants every scope the request asks for.
async function approve(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  const result = {};
  if (prompt.name === "login") {
    result.login = { accountId: "user-1" };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(" "));
    for (const [resource, scopes] of Object.entries(prompt.details.missingResourceScopes || {})) {
      grant.addResourceScope(resource, scopes.join(" "));
    }
    result.consent = { grantId: await grant.save() };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const handle = provider.callback();
server.on("request", (req, res) => {
  if (req.url === "/_events") {
    res.setHeader("Content-Type", "application/json");
    res.end(JSON.stringify(events));
  } else if (req.url.startsWith("/interaction/")) {
    approve(req, res).catch((err) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  } else {
    handle(req, res);
  }
});

if (env.MINIME_INTEROP_STDIN_EOF) {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.resume();
}
process.on("SIGTERM", () => process.exit(0));
console.log(`oidc: issuer ${issuer}`);
