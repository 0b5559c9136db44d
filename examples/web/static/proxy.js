// The sandbox proxy of an MCP App view. It runs on the view's own origin
// (a port of 127.0.0.1 that no other view shares, never the host's), under
// the view's Content-Security-Policy (the HTTP header of its page, built
// in Go from the view's metadata, which the view's document inherits), and
// relays messages between the host page and the view: from the host only,
// to the view only. It takes only trusted events, those the browser made
// for a real postMessage: a script that dispatches a MessageEvent of its
// own can set its source and origin to anything.
"use strict";
(() => {
  const hostOrigin = document.querySelector('meta[name="host-origin"]').content;
  if (window.self === window.top) throw new Error("the sandbox proxy must be framed by the host");
  let inner = null;
  const reserved = (m) => m && typeof m.method === "string" && m.method.startsWith("ui/notifications/sandbox-");
  window.addEventListener("message", (ev) => {
    if (!ev.isTrusted) return;
    const msg = ev.data;
    if (ev.source === window.parent && ev.origin === hostOrigin) {
      if (msg && msg.method === "ui/notifications/sandbox-resource-ready") {
        if (!inner) load(msg.params || {});
        return;
      }
      if (inner && !reserved(msg)) inner.contentWindow.postMessage(msg, window.origin);
      return;
    }
    if (inner && ev.source === inner.contentWindow && ev.origin === window.origin && !reserved(msg)) {
      window.parent.postMessage(msg, hostOrigin);
    }
  });
  function load(p) {
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (typeof p.allow === "string" && p.allow) inner.setAttribute("allow", p.allow);
    document.body.appendChild(inner);
    const doc = inner.contentDocument;
    doc.open();
    doc.write(String(p.html || ""));
    doc.close();
  }
  window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}}, hostOrigin);
})();
