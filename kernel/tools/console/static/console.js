// The framebus console page: one WebSocket (msgpack both ways), the newest state drawn as it comes.
"use strict";
(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, attrs = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  };
  const json = (v) => JSON.stringify(v, null, 1);
  let ws = null, nextId = 1, retries = 0;
  const pending = new Map();
  const state = { humans: [], human: {}, paused: false };

  function showError(text) { $("#error").textContent = text || ""; }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(`${proto}//${location.host}/ws?token=${encodeURIComponent(token)}`);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => { retries = 0; setState(state.paused ? "paused" : "running"); showError(""); };
    ws.onclose = (ev) => {
      setState("closed");
      for (const answer of pending.values()) answer({ ok: false, error: "the console's socket closed" });
      pending.clear();
      const refused = ev.code === 4401 || ev.code === 4403;
      showError(refused ? `refused: ${ev.reason}`
        : ev.code === 1011 ? `closed: ${ev.reason}; reconnecting` : "the console is gone (the run ended?); reconnecting");
      // A dropped socket (a console that was busy, a network blip) is opened again; a refusal is final.
      // The console sends every key's newest value to a new socket, so nothing shown goes stale.
      if (!refused) setTimeout(connect, Math.min(5000, 500 * 2 ** retries++));
    };
    ws.onmessage = (ev) => {
      const msg = MsgPack.decode(ev.data);
      if (msg.type === "batch") for (const [key, value] of Object.entries(msg.items)) apply(key, value);
      else if (msg.type === "reply") {
        const p = pending.get(msg.id); pending.delete(msg.id);
        if (!msg.ok) showError(msg.error);
        if (p) p(msg);
      }
    };
  }

  function send(op, fields = {}) {
    return new Promise((resolve) => {
      if (!ws || ws.readyState !== WebSocket.OPEN) { showError("not connected"); return resolve({ ok: false }); }
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(MsgPack.encode({ id, op, ...fields }));
    });
  }

  function setState(s) { const e = $("#run-state"); e.dataset.state = s; e.textContent = s; }

  function card(container, id, title) {
    let c = document.getElementById(id);
    if (!c) {
      c = el("div", { id, class: "card" }, el("h3", {}, title));
      $(container).append(c);
      if (container === "#envs") {  // the frame first, then what the environment says
        c.append(el("img", { class: "frame", alt: `newest frame of ${title}` }), el("div", { class: "obs-info" }),
                 el("pre", { class: "obs-text" }), el("pre", { class: "step-record" }));
      }
    }
    return c;
  }
  function part(c, cls, tag = "pre") {
    let p = c.querySelector("." + cls);
    if (!p) { p = el(tag, { class: cls }); c.append(p); }
    return p;
  }

  function apply(key, v) {
    const [kind, name] = [key.split(":")[0], key.slice(key.indexOf(":") + 1)];
    if (kind === "hello") { state.humans = v.humans; return; }
    if (kind === "status") return drawStatus(v);
    if (kind === "stats") return drawStats(v);
    if (kind === "console") {
      $("#counters").textContent = `frames in ${v.frames_in}, sent ${v.frames_sent}, skipped ${v.frames_skipped}; ` +
        `page drops ${v.page_dropped}; refused ${v.refused}`;
      return;
    }
    if (kind === "error") return showError(v.message);
    if (kind === "usage") {
      $("#usage").textContent = `${v.decisions} agent decisions, ${v.tokens} tokens, $${v.cost_usd.toFixed(4)}`;
      return;
    }
    if (kind === "episodes") return drawEpisodes(v.rows);
    if (kind === "frame") {
      const c = card("#envs", "env-" + v.node, v.node);
      const img = part(c, "frame", "img");
      const url = URL.createObjectURL(new Blob([v.jpeg], { type: "image/jpeg" }));
      const old = img.src;
      img.onload = () => { if (old && old.startsWith("blob:")) URL.revokeObjectURL(old); };
      img.src = url;
      img.dataset.serial = v.serial;
      img.title = `${v.size[0]}x${v.size[1]}, frame ${v.serial}`;
      return;
    }
    if (kind === "obs") {
      const c = card("#envs", "env-" + v.node, v.node);
      const info = part(c, "obs-info", "div");
      info.textContent = `episode ${v.episode ?? "?"}, t=${v.t ?? "?"}${v.goal ? " — " + v.goal : ""}`;
      info.dataset.t = v.t ?? "";
      info.dataset.episode = v.episode ?? "";
      part(c, "obs-text").textContent = typeof v.text === "string" ? v.text : json(v.text);
      return;
    }
    if (kind === "agent") return drawAgent(v);
    if (kind === "human") return drawHuman(v);
    if (kind === "out") {
      const [node, output] = [v.node, v.output];
      if (output === "step") {
        const c = card("#envs", "env-" + node, node);
        part(c, "step-record").textContent = json(v.body);
      } else if (output === "action") {
        const c = card("#agents", "agent-" + node, node);
        const a = part(c, "sent-action", "div");
        a.textContent = `action: ${typeof v.body === "string" ? v.body : JSON.stringify(v.body)} (step ${v.step ?? "?"})`;
      }
    }
  }

  function drawStatus(s) {
    $("#run-name").textContent = s.run || "";
    state.paused = !!s.paused;
    if ($("#run-state").dataset.state !== "closed") setState(s.paused ? "paused" : "running");
    const e = s.episodes || {};
    $("#progress").textContent = `episodes ${e.completed ?? 0}/${e.total ?? "?"} done, ${e.failed ?? 0} failed`;
    const body = $("#nodes tbody"); body.textContent = "";
    for (const [n, info] of Object.entries(s.nodes || {})) {
      const clock = info.clock ? `${info.clock.mode || ""} ${info.clock.paused ? "(paused)" : ""}` : "";
      body.append(el("tr", { "data-node": n }, el("td", {}, n), el("td", {}, info.state), el("td", {}, String(info.pid ?? "")),
        el("td", {}, String(Math.max(0, (info.incarnation ?? 1) - 1))), el("td", {}, clock)));
    }
  }

  function drawStats(s) {
    const body = $("#edges tbody"); body.textContent = "";
    for (const e of s.edges || []) {
      if (e.edge.includes("-> console/")) continue;  // the console's own inputs: see the counters
      body.append(el("tr", { "data-edge": e.edge, "data-sent": String(e.sent) }, ...["edge", "policy", "sent", "received", "dropped", "queued"].map((k) => el("td", {}, String(e[k])))));
    }
  }

  function drawEpisodes(rows) {
    const body = $("#episodes tbody"); body.textContent = "";
    for (const r of rows) {
      const metrics = Object.entries(r.metrics || {}).map(([k, v]) => `${k}=${typeof v === "number" ? +v.toFixed(4) : v}`).join(", ");
      const tr = el("tr", { "data-episode": r.episode }, el("td", {}, String(r.index ?? "")), el("td", {}, r.episode),
        el("td", {}, r.status), el("td", {}, metrics));
      tr.onclick = () => window.framebusReplay.open(r.episode);
      body.append(tr);
    }
  }

  function drawAgent(v) {
    const c = card("#agents", "agent-" + v.node, v.node);
    const r = v.record || {};
    const valid = part(c, "valid", "div");
    valid.className = "valid valid-" + (r.valid === undefined ? "true" : String(!!r.valid));
    valid.textContent = `episode ${r.episode ?? "?"} t=${r.t ?? "?"}  valid: ${r.valid ?? "?"}` +
      (r.decided_by ? `  decided by: ${r.decided_by}` : "");
    const prompt = r.prompt ?? r.messages ?? r.question;
    part(c, "prompt").textContent = prompt === undefined ? "" : "prompt: " + summarize(prompt);
    part(c, "reply").textContent = "reply: " + (r.reply ?? r.raw ?? r.response ?? r.output ?? "");
    part(c, "parsed").textContent = "parsed: " + JSON.stringify(r.parsed ?? r.actions ?? r.action ?? r.sent ?? null) +
      (r.error ? `  error: ${r.error}` : "");
    const u = r.usage || {};
    part(c, "usage", "div").textContent = r.usage || r.cost_usd !== undefined
      ? `tokens ${u.prompt_tokens ?? "?"} in, ${u.completion_tokens ?? "?"} out; ` +
        `${r.latency_s !== undefined ? r.latency_s + " s" : ""}${r.cost_usd ? ", $" + r.cost_usd : ""}` : "";
  }

  function summarize(prompt) {
    if (typeof prompt === "string") return prompt.slice(-1200);
    if (Array.isArray(prompt)) {
      const last = prompt[prompt.length - 1] || {};
      const content = Array.isArray(last.content)
        ? last.content.map((p) => p.text ?? p.image ?? "").join(" ") : String(last.content ?? "");
      return `${prompt.length} messages; last (${last.role}): ${content.slice(-1200)}`;
    }
    return JSON.stringify(prompt).slice(0, 1200);
  }

  // a person plays an agent.web node ------------------------------------------------------------
  function drawHuman(v) {
    state.human[v.node] = v;
    const c = card("#humans", "human-" + v.node, `${v.node} (you)`);
    c.classList.add("human");
    c.dataset.waiting = String(!!v.waiting);
    c.dataset.episode = v.episode ?? "";
    c.dataset.t = v.t ?? "";
    part(c, "human-info", "div").textContent = `episode ${v.episode ?? "?"}, t=${v.t ?? "?"}` +
      (v.goal ? " — " + v.goal : "") + (v.error ? `  (${v.error})` : "");
    part(c, "human-text").textContent = v.text ? String(v.text) : "";
    const mode = part(c, "mode", "div");
    mode.dataset.mode = v.mode || "human";
    if (v.auto) {  // the elements stay put (a button rebuilt at every step could not be clicked)
      let label = mode.querySelector(".mode-label"), b = mode.querySelector(".mode-toggle");
      if (!b) {
        label = el("span", { class: "mode-label" });
        b = el("button", { class: "mode-toggle", title: "Shift+T" });
        b.onclick = () => toggleMode(v.node);
        mode.append(label, " ", b);
      }
      const auto = v.mode === "auto";
      b.textContent = auto ? "Take over" : "Hand back";
      label.textContent = (auto ? "the agent decides (act to decide this step yourself)" : "you decide every step") +
        (v.decided_by ? ` — last step decided by ${v.decided_by}` : "");
    }
    const row = part(c, "actions", "div");
    const names = JSON.stringify(v.actions || []);
    if (row.dataset.actions !== names) {
      row.dataset.actions = names; row.textContent = "";
      (v.actions || []).forEach((a, i) => {
        const b = el("button", { "data-action": a, title: keyOf(v, a) ? `key ${keyOf(v, a)}` : `key ${i + 1}` }, a);
        b.onclick = () => act(v.node, a);
        row.append(b);
      });
    }
    for (const b of row.querySelectorAll("button")) b.disabled = !v.waiting;
    const typed = part(c, "typed", "form");
    if (!typed.firstChild) {
      const input = el("input", { type: "text", name: "action", placeholder: "type an action and press Enter", size: "40" });
      typed.append(input, el("button", { type: "submit" }, "Send"));
      typed.onsubmit = (ev) => { ev.preventDefault(); if (input.value.trim()) act(v.node, input.value.trim()); input.value = ""; };
    }
    part(c, "keys", "div").textContent = "keys: " + Object.entries(v.keys || {}).map(([k, a]) => `${k}: ${a}`).join("  ") +
      (v.actions && v.actions.length ? `  1-${Math.min(9, v.actions.length)}: action by number` : "") + "  Esc: give up";
  }
  function keyOf(v, action) { for (const [k, a] of Object.entries(v.keys || {})) if (a === action) return k; return null; }

  function toggleMode(node) {
    const h = state.human[node];
    return send("mode", { node, mode: h && h.mode === "auto" ? "human" : "auto" });
  }

  async function act(node, action) {
    const reply = await send("act", { node, action });
    if (reply.ok) showError("");
  }

  const KEY_NAMES = { ArrowLeft: "left", ArrowRight: "right", ArrowUp: "up", ArrowDown: "down", " ": "space",
                      Enter: "return", Tab: "tab", Backspace: "backspace" };
  document.addEventListener("keydown", (ev) => {
    if (ev.target instanceof HTMLInputElement || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if ($("#replay").open && !ev.shiftKey) return;  // keys go to the replay; Shift+P/R/S/X/T still steer the run
    if (ev.shiftKey && ev.key.toUpperCase() === "T") {
      const h = Object.values(state.human).find((x) => x.auto);
      if (h) { ev.preventDefault(); toggleMode(h.node); }
      return;
    }
    if (ev.shiftKey && ["P", "R", "S", "X"].includes(ev.key.toUpperCase()) && ev.key.length === 1) {
      ev.preventDefault();
      return { P: pause, R: resume, S: step, X: stop }[ev.key.toUpperCase()]();
    }
    const waiting = Object.values(state.human).filter((h) => h.waiting && (!h.auto || h.mode === "human"));
    if (!waiting.length) return;
    const h = waiting[0];
    const name = KEY_NAMES[ev.key] || ev.key.toLowerCase();
    let action = (h.keys || {})[name];
    if (action === undefined && /^[1-9]$/.test(name) && h.actions && +name <= h.actions.length) action = h.actions[+name - 1];
    if (name === "escape") action = { stop: true, reason: "the player gave up" };
    if (action === undefined) return;
    ev.preventDefault();
    act(h.node, action);
  });

  // A command's reply carries the run's status as the kernel left it: drawn at once, so the page
  // never shows the state from before the click while the next batch is still on its way.
  const ctl = (fields) => send("ctl", fields).then((r) => { if (r.ok && r.status) drawStatus(r.status); return r; });
  const pause = () => ctl({ cmd: "pause" });
  const resume = () => ctl({ cmd: "resume" });
  const step = () => {
    const n = parseInt($("#step-n").value, 10);
    if (!(n >= 1)) return showError(`step: the number of decisions must be 1 or more (got ${$("#step-n").value})`);
    return ctl({ cmd: "step", n });
  };
  const stop = () => ctl({ cmd: "stop" });
  window.framebusConsole = { send, summarize };
  $("#btn-pause").onclick = pause;
  $("#btn-resume").onclick = resume;
  $("#btn-step").onclick = step;
  $("#btn-stop").onclick = stop;
  connect();
})();
