// Preloaded by the interop tests with `node --require`, before the server
// under test runs. It makes every TCP server of the process listen on
// 127.0.0.1 only (servers that call listen(port) would otherwise bind every
// interface) and prints each bound address on stderr, so a test can start a
// server on port 0 with no race for the port. When MINIME_INTEROP_STDIN_EOF
// is set, the process also exits when its stdin closes: a test that dies
// without cleaning up takes its server with it.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const port = Number(args[0]);
    if (Number.isInteger(port)) {
      // listen(port[, host][, backlog][, callback]): force the host.
      args = [port, "127.0.0.1", ...args.slice(1).filter((a) => typeof a !== "string")];
    }
  } else if (args[0] !== null && typeof args[0] === "object" && args[0].path === undefined) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  this.once("listening", () => {
    const a = this.address();
    if (a !== null && typeof a === "object") {
      process.stderr.write(`mini-me-interop: listening on ${a.address}:${a.port}\n`);
    }
  });
  return listen.apply(this, args);
};

if (process.env.MINIME_INTEROP_STDIN_EOF) {
  process.stdin.on("end", () => process.exit(0));
  process.stdin.on("error", () => process.exit(0));
  process.stdin.resume();
}
