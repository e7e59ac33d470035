// The replay view: an episode played back step by step from the run folder (kernel/tools/console/replay.py).
// It asks for the episode's outline once (op "replay": one small row per step), then for each step it
// shows (op "replay_step"), so a long episode's prompts never travel all at once; frames are plain
// <img> requests to /frame/EPISODE/T on the same token-protected server.
"use strict";
(() => {
  const C = window.framebusConsole;
  const dlg = document.getElementById("replay");
  const q = (sel) => dlg.querySelector(sel);
  const el = (tag, attrs = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  };
  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
  const token = new URLSearchParams(location.search).get("token") || "";
  const PENDING_TRIES = 15;  // outlines asked again, a second apart, while the recording catches up
  const R = { episode: null, outline: null, steps: [], index: 0, cache: new Map(), playing: false, loop: 0, tries: 0,
              frameDone: null };

  async function open(episode) {
    R.episode = episode; R.outline = null; R.steps = []; R.index = 0; R.cache = new Map(); R.tries = 0;
    setPlaying(false);
    dlg.dataset.episode = episode;
    dlg.dataset.steps = "";
    q(".r-title").textContent = `replay of ${episode}`;
    q(".r-meta").textContent = "loading…";
    q(".r-error").textContent = "";
    if (!dlg.open) dlg.showModal();
    await load();
  }

  // The outline; asked again while the recording catches up (the step shown stays where it is).
  async function load() {
    const episode = R.episode;
    const reply = await C.send("replay", { episode });
    if (episode !== R.episode || !dlg.open) return;
    if (!reply.ok) { q(".r-error").textContent = reply.error || "the replay could not be loaded"; q(".r-meta").textContent = ""; return; }
    R.outline = reply; R.steps = reply.steps; R.cache = new Map();
    const m = Object.entries(reply.metrics || {}).filter(([, v]) => typeof v !== "object")
      .map(([k, v]) => `${k}=${typeof v === "number" ? +v.toFixed(4) : v}`).join(", ");
    q(".r-meta").textContent = `${reply.status}${reply.node ? " on " + reply.node : ""} — ${reply.steps.length} steps, ` +
      `${reply.stored} step records; frames: ${reply.frames ? reply.recordings.join(", ") : "none"}${m ? " — " + m : ""}`;
    dlg.dataset.steps = String(reply.steps.length);
    dlg.dataset.frames = String(!!reply.frames);
    dlg.dataset.pending = String(!!reply.pending);
    const slider = q(".r-slider");
    slider.max = String(Math.max(0, reply.steps.length - 1));
    slider.disabled = reply.steps.length === 0;
    if (!reply.steps.length) {
      q(".r-pos").textContent = "no steps";
      q(".r-summary").textContent = "this episode kept no steps: agents that write step records (agent.llm, agent.web) " +
        "put them in results.sqlite, and `launch run --record` keeps every observation and frame";
      showFrame(null);
    } else await go(Math.min(R.index, reply.steps.length - 1));
    if (reply.pending && R.tries < PENDING_TRIES) {  // the recorder writes every few seconds: ask again
      R.tries++;
      await sleep(1000);
      if (episode === R.episode && dlg.open) await load();
    }
  }

  async function stepOf(t) {
    const cache = R.cache;  // a new outline brings a new cache: an answer to the old one stays out of it
    if (!cache.has(t)) {
      const episode = R.episode;
      const reply = await C.send("replay_step", { episode, t });
      if (episode !== R.episode) return null;
      if (!reply.ok) return { error: reply.error };
      cache.set(t, reply);
    }
    return cache.get(t);
  }

  // Show step number i (an index into the outline); resolves once its frame has loaded or failed.
  async function go(i) {
    if (!R.steps.length) return;
    i = Math.max(0, Math.min(R.steps.length - 1, i));
    R.index = i;
    const s = R.steps[i];
    q(".r-slider").value = String(i);
    q(".r-pos").textContent = `step ${i + 1} of ${R.steps.length}, t=${s.t}`;
    dlg.dataset.index = String(i);
    const detail = await stepOf(s.t);
    if (R.index !== i || R.steps[i] !== s || detail === null) return;  // moved on, or a newer outline came
    if (detail.step) {  // the outline may be older than the recording's newest steps: the step's own answer is newer
      for (const k of ["action", "valid", "reward", "done"]) s[k] = detail.step[k];
    }
    s.frame = !!detail.frame;
    dlg.dataset.t = String(s.t);
    drawSummary(i, s, detail);
    drawRecords(detail);
    await showFrame(s, detail);
  }

  function drawSummary(i, s, d) {
    let ret = 0;
    for (let k = 0; k <= i; k++) if (typeof R.steps[k].reward === "number") ret += R.steps[k].reward;
    const has = typeof s.reward === "number";
    q(".r-action").textContent = typeof s.action === "string" ? s.action : JSON.stringify(s.action ?? null);
    const v = q(".r-valid");
    v.textContent = s.valid === null || s.valid === undefined ? "?" : s.valid ? "valid" : "invalid";
    v.className = "r-valid valid-" + String(s.valid !== false);
    q(".r-reward").textContent = has ? `reward ${+s.reward.toFixed(4)}, return ${+ret.toFixed(4)}` : "no reward recorded";
    q(".r-decided").textContent = s.decided_by.length ? "decided by " + s.decided_by.join(", ") : "";
    q(".r-done").textContent = s.done ? "episode ends here" : "";
    q(".r-error").textContent = d.error || "";
    const o = d.obs;
    q(".r-goal").textContent = o && o.goal ? "goal: " + o.goal : "";
    q(".r-obs").textContent = o ? o.text : "no observation recorded for this step (`launch run --record` keeps them)";
    q(".r-step").textContent = d.step ? "environment: " + JSON.stringify(d.step, null, 1) : "";
  }

  function drawRecords(d) {
    const box = q(".r-records"); box.textContent = "";
    for (const { node, record: r } of d.records || []) {
      const card = el("div", { class: "r-record", "data-node": node });
      const valid = r.valid === undefined ? "" : `  valid: ${r.valid}`;
      card.append(el("h4", {}, `${node}${r.decided_by ? " — decided by " + r.decided_by : ""}${valid}`));
      const prompt = r.prompt ?? r.messages ?? r.question;
      if (prompt !== undefined) card.append(el("pre", { class: "r-prompt" }, "prompt: " + C.summarize(prompt)));
      const reply = r.reply ?? r.raw ?? r.response ?? r.output;
      if (reply !== undefined) card.append(el("pre", { class: "r-reply" }, "reply: " + reply));
      const parsed = r.parsed ?? r.actions ?? r.action;
      const said = [parsed !== undefined ? "parsed: " + JSON.stringify(parsed) : "",
                    r.sent !== undefined ? "sent: " + JSON.stringify(r.sent) : "", r.error ? "error: " + r.error : ""];
      card.append(el("div", { class: "r-parsed" }, said.filter(Boolean).join("  ")));
      const u = r.usage || {};
      if (r.usage || r.latency_s !== undefined) {
        card.append(el("div", { class: "r-usage" }, `tokens ${u.prompt_tokens ?? "?"} in, ${u.completion_tokens ?? "?"} out` +
          (r.latency_s !== undefined ? `; ${r.latency_s} s` : "") + (r.cost_usd ? `; $${r.cost_usd}` : "")));
      }
      card.append(el("details", {}, el("summary", {}, "the whole record"), el("pre", {}, JSON.stringify(r, null, 1))));
      box.append(card);
    }
    if (!(d.records || []).length) {
      box.append(el("div", { class: "r-none" }, R.outline && !R.outline.stored
        ? "no step records for this episode in results.sqlite: only agents that keep them (agent.llm, agent.web) write them"
        : "no step record for this step in results.sqlite"));
    }
  }

  function showFrame(s, d) {
    const img = q(".r-frame"), note = q(".r-noframe");
    if (R.frameDone) R.frameDone();  // a step shown before this one stops waiting for its frame
    R.frameDone = null;
    if (!s || !d || !d.frame) {
      img.hidden = true; img.removeAttribute("src"); delete img.dataset.t;
      note.textContent = R.outline && !R.outline.frames ? R.outline.frames_note : s ? `no frame recorded for t=${s.t}` : "";
      return Promise.resolve();
    }
    note.textContent = "";
    const src = `frame/${encodeURIComponent(R.episode)}/${s.t}?token=${encodeURIComponent(token)}`;
    const current = () => R.steps[R.index] && R.steps[R.index].t === s.t;
    const shown = () => { if (current()) { img.hidden = false; img.dataset.t = String(s.t); } };
    if (img.getAttribute("src") === src && img.complete && img.naturalWidth) { shown(); return Promise.resolve(); }
    return new Promise((done) => {
      R.frameDone = done;
      img.onload = () => { shown(); done(); };
      img.onerror = () => { img.hidden = true; delete img.dataset.t; note.textContent = `the frame of t=${s.t} could not be read`; done(); };
      img.src = src;
    });
  }

  function setPlaying(on) {
    R.playing = on;
    dlg.dataset.playing = String(on);
    q(".r-play").textContent = on ? "❚❚ pause" : "▶ play";
    if (on) play();
  }

  async function play() {
    const me = ++R.loop;
    if (R.index >= R.steps.length - 1) await go(0);  // play at the end starts over
    while (R.playing && me === R.loop) {
      await sleep(1000 / +q(".r-speed").value);
      if (!R.playing || me !== R.loop) return;
      if (R.index >= R.steps.length - 1) return setPlaying(false);
      await go(R.index + 1);  // the next wait starts once this step is shown: slow frames slow the play, never skip
    }
  }

  const manual = (i) => { setPlaying(false); return go(i); };
  q(".r-first").onclick = () => manual(0);
  q(".r-prev").onclick = () => manual(R.index - 1);
  q(".r-next").onclick = () => manual(R.index + 1);
  q(".r-last").onclick = () => manual(R.steps.length - 1);
  q(".r-play").onclick = () => setPlaying(!R.playing);
  q(".r-slider").oninput = (ev) => manual(+ev.target.value);
  q(".r-close").onclick = () => dlg.close();
  dlg.addEventListener("close", () => { setPlaying(false); R.episode = null; });
  dlg.addEventListener("keydown", (ev) => {
    const tag = ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if ((ev.key === " " || ev.key === "Enter") && tag === "BUTTON") return;  // the button's own click
    const keys = { ArrowLeft: () => manual(R.index - 1), ArrowRight: () => manual(R.index + 1), Home: () => manual(0),
                   End: () => manual(R.steps.length - 1), " ": () => setPlaying(!R.playing) };
    if (keys[ev.key] && !ev.shiftKey) { ev.preventDefault(); ev.stopPropagation(); keys[ev.key](); }
  });
  window.framebusReplay = { open, go: manual, isOpen: () => dlg.open };
})();
