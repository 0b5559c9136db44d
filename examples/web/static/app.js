// The page of the mini-me web host. It shows the conversation the Go host
// streams (Server-Sent Events from /events), sends questions and approval
// decisions, and relays MCP App messages between the sandbox proxies and
// the Go bridge: every decision about them is made in Go.
"use strict";
(() => {
  const sandboxOrigin = document.querySelector('meta[name="sandbox-origin"]').content;
  const log = document.getElementById("log");
  const status = document.getElementById("status");
  const views = new Map(); // view id -> {frame, queue}
  let answer = null; // the assistant bubble being streamed
  let thought = null; // the model's reasoning being streamed, shown apart

  const add = (cls, text) => {
    const el = document.createElement("div");
    el.className = cls;
    if (text !== undefined) el.textContent = text;
    log.appendChild(el);
    log.scrollTop = log.scrollHeight;
    return el;
  };
  const post = (path, body) => fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const setStatus = (s) => { status.textContent = s; status.dataset.state = s; };

  document.getElementById("ask").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = document.getElementById("question");
    const text = q.value.trim();
    if (!text) return;
    q.value = "";
    post("/chat", {text});
  });

  const events = new EventSource("/events");
  const on = (type, fn) => events.addEventListener(type, (ev) => fn(JSON.parse(ev.data)));
  on("user", (d) => { add("msg user", d.text).dataset.from = d.from || "user"; answer = null; thought = null; });
  on("running", () => setStatus("running"));
  on("reasoning", (d) => {
    if (!thought) thought = add("msg reasoning", "");
    thought.textContent += d.text;
  });
  on("delta", (d) => {
    thought = null;
    if (!answer) answer = add("msg assistant", "");
    answer.textContent += d.text;
    answer.dataset.deltas = String(Number(answer.dataset.deltas || 0) + 1);
  });
  on("tool", (d) => {
    let el = document.getElementById("tool-" + d.id);
    if (!el) { el = add("tool"); el.id = "tool-" + d.id; }
    el.dataset.status = d.status;
    el.textContent = `🔧 ${d.name}: ${d.status}` + (d.output ? ` — ${d.output}` : "");
    answer = null;
    thought = null;
  });
  on("approval", (d) => {
    const el = add("approval");
    el.id = "approval-" + d.id;
    const p = document.createElement("p");
    p.textContent = `Allow ${d.name} (server ${d.server}) with ${d.arguments}?`;
    el.appendChild(p);
    for (const verdict of ["allow", "deny"]) {
      const b = document.createElement("button");
      b.textContent = verdict === "allow" ? "Allow" : "Deny";
      b.className = verdict;
      b.addEventListener("click", () => { el.querySelectorAll("button").forEach((x) => x.disabled = true); post("/approve", {id: d.id, verdict}); });
      el.appendChild(b);
    }
    setStatus("waiting for approval");
  });
  on("done", (d) => { setStatus("idle"); answer = null; if (d.error) add("notice error", d.error); });
  on("view", (d) => openView(d));
  on("view-msg", (d) => { const v = views.get(d.id); if (v) v.frame.contentWindow.postMessage(d.msg, sandboxOrigin); });
  on("view-size", (d) => { const v = views.get(d.id); if (v && d.height > 0) v.frame.style.height = d.height + "px"; });
  on("view-closed", (d) => { const v = views.get(d.id); if (v) { v.box.remove(); views.delete(d.id); } });
  on("link", (d) => {
    // The user decides: the view only asked.
    const ok = window.confirm(`An app asks to open ${d.url}\nOpen it?`);
    post(`/view/${d.id}/link`, {seq: d.seq, ok});
    if (ok) window.open(d.url, "_blank", "noopener,noreferrer");
  });

  // openView frames the sandbox proxy of a view; the proxy serves nothing
  // but the view, on its own origin, under the view's CSP.
  function openView(d) {
    const box = add("view");
    box.id = "view-" + d.id;
    const label = document.createElement("div");
    label.className = "label";
    label.textContent = `App of server ${d.server}: ${d.uri}`;
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
    if (d.allow) frame.setAttribute("allow", d.allow);
    frame.title = "MCP App " + d.uri;
    frame.src = d.src;
    box.append(label, frame);
    views.set(d.id, {frame, box, queue: Promise.resolve()});
  }

  // Messages from a proxy: only from the frame of that view, and from the
  // sandbox origin; relayed to Go in the order they came.
  window.addEventListener("message", (ev) => {
    if (ev.origin !== sandboxOrigin) return;
    for (const [id, v] of views) {
      if (ev.source !== v.frame.contentWindow) continue;
      const msg = ev.data;
      if (!msg || typeof msg !== "object" || Array.isArray(msg)) return;
      if (msg.method === "ui/notifications/sandbox-proxy-ready") {
        fetch(`/view/${id}/html`).then((r) => r.json()).then((p) => {
          v.frame.contentWindow.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready",
            params: {html: p.html, permissions: p.permissions, allow: p.allow}}, sandboxOrigin);
        });
        return;
      }
      v.queue = v.queue.then(() => post(`/view/${id}/rpc`, msg)).catch(() => {});
      return;
    }
  });
})();
