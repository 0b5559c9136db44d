// An MCP server on the TypeScript SDK 1.x, for the interop tests, tapped
// like the Go servers of ../servers/tap: with $MINIME_INTEROP_TAP set, it
// appends one line per event to that file ("start PID", "method NAME" for
// each JSON-RPC message received, "session ID" for each HTTP session it
// issued, "delete ID" for each DELETE).
//
//   node --require harness.cjs tssdk-server.cjs INSTALL_DIR PACKAGE MODE
//
// INSTALL_DIR is the npm install of ../npm (setup.sh), PACKAGE the SDK's
// package name there (@modelcontextprotocol/sdk, or an alias of an older
// release such as sdk-1.12.1), MODE stdio, http (one transport per
// session, as the SDK's documentation shows) or http-stateless. Over stdio
// the process exits when its stdin ends.
"use strict";
const fs = require("node:fs");
const http = require("node:http");
const path = require("node:path");
const { randomUUID } = require("node:crypto");
const { createRequire } = require("node:module");
const { PassThrough } = require("node:stream");

const [dir, pkg, mode] = process.argv.slice(2);
const load = createRequire(path.join(dir, "package.json"));
const { Server } = load(`${pkg}/server/index.js`);
const { StdioServerTransport } = load(`${pkg}/server/stdio.js`);
const { StreamableHTTPServerTransport } = load(`${pkg}/server/streamableHttp.js`);
const { ListToolsRequestSchema, CallToolRequestSchema } = load(`${pkg}/types.js`);

function record(line) {
  if (process.env.MINIME_INTEROP_TAP) fs.appendFileSync(process.env.MINIME_INTEROP_TAP, line + "\n");
}

function methods(message) {
  for (const m of [].concat(message)) {
    if (m && typeof m.method === "string") record(`method ${m.method}`);
  }
}

function newServer() {
  const s = new Server({ name: `tssdk-${pkg}`, version: "1.0.0" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "echo", description: "Returns its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } }],
  }));
  s.setRequestHandler(CallToolRequestSchema, async (r) => ({
    content: [{ type: "text", text: "echo: " + ((r.params.arguments && r.params.arguments.text) || "") }],
  }));
  return s;
}

record(`start ${process.pid}`);

if (mode === "stdio") {
  const input = new PassThrough();
  let pending = "";
  process.stdin.on("data", (chunk) => {
    pending += chunk.toString("utf8");
    let i;
    while ((i = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, i);
      pending = pending.slice(i + 1);
      try {
        methods(JSON.parse(line));
      } catch {
        // not JSON: the SDK reports it
      }
    }
    input.write(chunk);
  });
  process.stdin.on("end", () => process.exit(0));
  newServer().connect(new StdioServerTransport(input, process.stdout));
} else {
  const stateless = mode === "http-stateless";
  const sessions = new Map();
  const reject = (res, status, message) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32000, message } }));
  };
  http
    .createServer(async (req, res) => {
      let body;
      if (req.method === "POST") {
        const chunks = [];
        for await (const c of req) chunks.push(c);
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          return reject(res, 400, "Parse error");
        }
        methods(body);
      } else if (req.method === "DELETE") {
        record(`delete ${req.headers["mcp-session-id"] || ""}`);
      }
      const sid = req.headers["mcp-session-id"];
      let t;
      if (stateless) {
        t = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const s = newServer();
        res.on("close", () => {
          t.close();
          s.close();
        });
        await s.connect(t);
      } else if (sid) {
        t = sessions.get(sid);
        if (!t) return reject(res, 404, "Session not found");
      } else if (req.method === "POST" && [].concat(body).some((m) => m && m.method === "initialize")) {
        t = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, t);
            record(`session ${id}`);
          },
        });
        t.onclose = () => {
          if (t.sessionId) sessions.delete(t.sessionId);
        };
        await newServer().connect(t);
      } else {
        return reject(res, 400, "Bad Request: No valid session ID provided");
      }
      await t.handleRequest(req, res, body);
    })
    .listen(0);
}
