// The page of the mini-me web host. It shows the conversation the Go host
// streams (Server-Sent Events from /events), sends questions and approval
// decisions, and relays MCP App messages between the sandbox proxies and
// the Go bridge: every decision about them is made in Go.
"use strict";
(() => {
  const log = document.getElementById("log");
  const status = document.getElementById("status");
  const views = new Map(); // view id -> {frame, box, origin, queue}
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
  // A message from a view is shown as the view's, never as the user's.
  on("user", (d) => {
    const from = d.from || "user";
    const el = add(from === "user" ? "msg user" : "msg app");
    el.dataset.from = from;
    if (from !== "user") {
      const label = document.createElement("div");
      label.className = "label";
      label.textContent = `From the ${from}, sent with your consent:`;
      el.appendChild(label);
    }
    el.appendChild(document.createTextNode(d.text));
    answer = null;
    thought = null;
  });
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
  // What a call's status means to the user; the output is shown only
  // for a call that ran (the Go host sends none otherwise).
  const statusText = {"proposed": "proposed", "running": "running", "ok": "done", "tool-error": "the tool reported an error",
    "pending": "waiting for your approval", "denied": "denied", "invalid": "not run: invalid arguments",
    "unknown-tool": "not run: no such tool", "repeated": "not run: a repeated call", "failed": "failed", "canceled": "canceled"};
  on("tool", (d) => {
    let el = document.getElementById("tool-" + d.id);
    if (!el) { el = add("tool"); el.id = "tool-" + d.id; }
    el.dataset.status = d.status;
    el.textContent = `🔧 ${d.name}: ${statusText[d.status] || d.status}` + (d.output ? ` — ${d.output}` : "");
    answer = null;
    thought = null;
  });
  on("approval", (d) => {
    const el = add("approval");
    el.id = "approval-" + d.id;
    const p = document.createElement("p");
    p.className = "question";
    p.textContent = `Allow ${d.title ? `${d.title} (${d.name})` : d.name} of server ${d.server}?`;
    el.appendChild(p);
    if (d.description) {
      const desc = document.createElement("p");
      desc.className = "description";
      desc.textContent = `The server says: ${d.description}`;
      el.appendChild(desc);
    }
    const hints = document.createElement("p");
    hints.className = "hints";
    hints.textContent = `Hints from the server: ${(d.hints || []).join("; ")}`;
    const args = document.createElement("pre");
    args.className = "arguments";
    args.textContent = d.arguments;
    el.append(hints, args);
    for (const verdict of ["allow", "deny"]) {
      const b = document.createElement("button");
      b.textContent = verdict === "allow" ? "Allow" : "Deny";
      b.className = verdict;
      b.addEventListener("click", () => { answered(el, verdict); post("/approve", {id: d.id, verdict}); });
      el.appendChild(b);
    }
    setStatus("waiting for approval");
  });
  // A view asks to send the model a message: the user decides whether it
  // goes, and sees it as the view's.
  on("app-message", (d) => {
    const el = add("ask app-message");
    el.id = `app-message-${d.id}-${d.seq}`;
    const p = document.createElement("p");
    p.textContent = `The app ${d.uri} of server ${d.server} wants to send this message to the model, as if from you:`;
    const q = document.createElement("blockquote");
    q.textContent = d.text;
    el.append(p, q);
    for (const [ok, label, cls] of [[true, "Send to the model", "allow"], [false, "Ignore", "deny"]]) {
      const b = document.createElement("button");
      b.textContent = label;
      b.className = cls;
      b.addEventListener("click", () => { answered(el, cls); post(`/view/${d.id}/answer`, {seq: d.seq, ok}); });
      el.appendChild(b);
    }
  });
  on("done", (d) => { setStatus("idle"); answer = null; if (d.error) add("notice error", d.error); });
  on("view", (d) => openView(d));
  on("view-msg", (d) => { const v = views.get(d.id); if (v) v.frame.contentWindow.postMessage(d.msg, v.origin); });
  on("view-size", (d) => { const v = views.get(d.id); if (v && d.height > 0) v.frame.style.height = d.height + "px"; });
  on("view-closed", (d) => { const v = views.get(d.id); if (v) { v.box.remove(); views.delete(d.id); } });
  on("link", (d) => {
    // The user decides: the view only asked.
    const ok = window.confirm(`An app asks to open ${d.url}\nOpen it?`);
    post(`/view/${d.id}/answer`, {seq: d.seq, ok});
    if (ok) window.open(d.url, "_blank", "noopener,noreferrer");
  });

  // answered records on a question's card which button was pressed, and
  // closes it.
  function answered(el, verdict) {
    el.dataset.answer = verdict;
    el.querySelectorAll("button").forEach((x) => x.disabled = true);
    const said = document.createElement("p");
    said.className = "answer";
    said.textContent = verdict === "allow" ? "You said yes." : "You said no.";
    el.appendChild(said);
  }

  // openView frames the sandbox proxy of a view; the proxy serves nothing
  // but the view, on the view's own origin, under the view's CSP.
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
    views.set(d.id, {frame, box, origin: d.origin, queue: Promise.resolve()});
  }

  // Messages from a proxy: only trusted ones, from the frame of that view
  // and from the view's own origin; relayed to Go in the order they came.
  window.addEventListener("message", (ev) => {
    if (!ev.isTrusted) return;
    for (const [id, v] of views) {
      if (ev.source !== v.frame.contentWindow) continue;
      if (ev.origin !== v.origin) return;
      const msg = ev.data;
      if (!msg || typeof msg !== "object" || Array.isArray(msg)) return;
      if (msg.method === "ui/notifications/sandbox-proxy-ready") {
        fetch(`/view/${id}/html`).then((r) => r.json()).then((p) => {
          v.frame.contentWindow.postMessage({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready",
            params: {html: p.html, permissions: p.permissions, allow: p.allow}}, v.origin);
        });
        return;
      }
      v.queue = v.queue.then(() => post(`/view/${id}/rpc`, msg)).catch(() => {});
      return;
    }
  });
})();
