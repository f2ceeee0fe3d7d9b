// awr ui: a read-only view of one project's log. Plain JS, no network
// beyond this page's own /api/ (every read there is one call through the
// project door, with `--at` semantics).
"use strict";

const PAGE = 1000;      // events per /api/log request (the most the API gives)
const MAX_EVENTS = 50000; // events the page holds at most
const POLL_MS = 1000;   // how often the head is polled

const S = {
  head: 0,            // the head revision the page knows
  headHash: "",
  events: [],         // the events shown (filtered), oldest first
  bySeq: new Map(),   // seq -> event, of the events shown
  truncated: false,
  sessions: new Map(), // session id -> session (at the head)
  headStatus: null,   // status at the head (origin, fork)
  rev: 0,             // the revision the slider shows
  following: true,    // the slider follows the head
  verify: null,       // the last /api/verify answer
  verifyError: "",
  selected: 0,        // the seq shown in the detail panel
  filters: { work: "", session: "", agent: "", kind: "" },
  stateSeq: 0,        // a counter that drops stale state answers
  busy: false,
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    // Styles through the CSSOM: the page's CSP refuses inline style attributes.
    else if (k === "style") Object.assign(e.style, v);
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

async function api(path, params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== "" && v !== undefined && v !== null) q.set(k, String(v));
  }
  const url = "/api/" + path + (q.toString() ? "?" + q : "");
  const r = await fetch(url, { headers: { Accept: "application/json" } });
  const body = await r.json();
  if (!r.ok) {
    const err = new Error(body.message || r.statusText);
    err.fault = body;
    throw err;
  }
  return body;
}

function showError(e) {
  const box = $("error");
  if (!e) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = e.fault ? `${e.fault.code}: ${e.fault.message}${e.fault.hint ? " (next: " + e.fault.hint + ")" : ""}` : String(e.message || e);
}

const short = (h, n) => (h ? h.slice(0, n || 12) : "");
const iso = (ms) => (ms ? new Date(ms).toISOString().replace(".000Z", "Z") : "");

function family(kind) {
  if (kind.startsWith("session_")) return "session";
  if (kind.startsWith("claim_")) return "claim";
  if (kind.startsWith("checkpoint_")) return "checkpoint";
  return "other";
}

function sessionOf(e) {
  if (e.stream && e.stream.startsWith("session/")) return e.stream.slice(8);
  const p = e.payload || {};
  return p.session_id || "";
}

// workOf is the timeline row of an event: the work item it names, the
// work item of its stream, or that of the session it concerns.
function workOf(e) {
  const p = e.payload || {};
  if (typeof p.work === "string" && p.work) return p.work;
  if (e.stream && e.stream.startsWith("work/")) return e.stream.slice(5);
  const s = S.sessions.get(sessionOf(e));
  if (s && s.work) return s.work;
  return "";
}

// matchesAgent: the agent filter keeps the events that agent wrote (the
// envelope's actor).
function matchesAgent(e) {
  return !S.filters.agent || e.actor === S.filters.agent;
}

// fetchEvents reads the events after since that match the filters.
async function fetchEvents(since) {
  const out = [];
  const f = S.filters;
  for (;;) {
    const res = await api("log", { since, work: f.work, session: f.session, kind: f.kind, limit: PAGE });
    for (const e of res.events) out.push(e);
    if (!res.next_since || S.events.length + out.length >= MAX_EVENTS) {
      S.truncated = !!res.next_since;
      return { events: out, head: res.project_revision };
    }
    since = res.next_since;
  }
}

async function loadHeadState() {
  const st = await api("state");
  S.sessions = new Map(st.sessions.sessions.map((s) => [s.id, s]));
  S.headStatus = st.status;
  renderLineage();
  fillFilters(st);
  return st;
}

function fillFilters(st) {
  const works = new Set();
  for (const it of st.ready.ready || []) works.add(it.key);
  for (const it of st.ready.not_ready || []) works.add(it.key);
  setOptions($("f-work"), [...works].sort(), S.filters.work);
  const sessions = [...S.sessions.values()];
  setOptions($("f-session"), sessions.map((s) => s.id), S.filters.session, (id) => {
    const s = S.sessions.get(id);
    return `${short(id, 10)}… ${s.agent} on ${s.work}`;
  });
  const agents = new Set(sessions.map((s) => s.agent).filter(Boolean));
  for (const e of S.events) if (e.actor) agents.add(e.actor);
  setOptions($("f-agent"), [...agents].sort(), S.filters.agent);
}

function setOptions(sel, values, current, label) {
  const have = [...sel.options].slice(1).map((o) => o.value);
  if (have.length === values.length && have.every((v, i) => v === values[i])) return;
  sel.replaceChildren(el("option", { value: "", text: "all" }));
  for (const v of values) sel.append(el("option", { value: v, text: label ? label(v) : v }));
  sel.value = values.includes(current) ? current : "";
}

async function loadKinds() {
  const res = await api("kinds");
  setOptions($("f-kind"), res.kinds, S.filters.kind);
}

// reload reads everything again: the head's state, every matching event,
// the slider's state, the verification.
async function reload() {
  const st = await loadHeadState();
  S.head = st.status.project_revision;
  S.headHash = st.status.head_hash;
  $("project-name").textContent = st.status.project_name || "";
  document.title = "awr ui: " + (st.status.project_name || "");
  const got = await fetchEvents(0);
  S.events = got.events.filter(matchesAgent);
  S.bySeq = new Map(S.events.map((e) => [e.seq, e]));
  if (S.following || S.rev > S.head || S.rev < 1) S.rev = S.head;
  renderAll();
  await loadState(S.rev);
  verify();
}

function renderAll() {
  renderHead();
  renderSlider();
  renderTimeline();
  renderEvents();
}

function renderHead() {
  $("head").textContent = `head revision ${S.head}` + (S.headHash ? ` · head hash ${short(S.headHash, 16)}…` : "");
  $("head").setAttribute("data-head", String(S.head));
  const n = S.events.length;
  $("f-count").textContent = `${n} event${n === 1 ? "" : "s"} shown` + (S.truncated ? ` (the first ${MAX_EVENTS})` : "");
}

function renderSlider() {
  const r = $("rev");
  r.min = S.head > 0 ? "1" : "0";
  r.max = String(S.head);
  r.value = String(S.rev);
  $("rev-label").textContent = `${S.rev} of ${S.head}` + (S.following ? " (following the head)" : "");
}

function x(seq) {
  return S.head > 0 ? ((seq - 0.5) / S.head) * 100 : 0;
}

function renderTimeline() {
  const rows = new Map();
  const order = [];
  const rowOf = (work) => {
    if (!rows.has(work)) { rows.set(work, []); order.push(work); }
    return rows.get(work);
  };
  for (const e of S.events) {
    rowOf(S.filters.work || workOf(e)).push(e);
  }
  order.sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a < b ? -1 : a > b ? 1 : 0));
  const tl = $("timeline");
  const frag = document.createDocumentFragment();
  const origin = S.headStatus && S.headStatus.origin;
  const fork = S.headStatus && S.headStatus.fork;
  for (const work of order) {
    const track = el("div", { class: "track" });
    // The session spans of the row: from its start to its end (or on).
    const spans = new Map();
    for (const e of rows.get(work)) {
      const sid = sessionOf(e);
      if (!sid || !e.stream.startsWith("session/")) continue;
      const sp = spans.get(sid) || { from: e.seq, to: 0 };
      if (e.kind === "session_ended") sp.to = e.seq;
      spans.set(sid, sp);
    }
    for (const [sid, sp] of spans) {
      const to = sp.to || S.head;
      const s = S.sessions.get(sid);
      track.append(el("div", {
        class: "span" + (sp.to ? "" : " open"), "data-session": sid,
        style: { left: `${x(sp.from)}%`, width: `${Math.max(x(to) - x(sp.from), 0.3)}%` },
        title: `session ${sid}${s ? " (" + s.agent + ")" : ""}: revisions ${sp.from}–${sp.to || "…"}`,
      }));
    }
    for (const e of rows.get(work)) {
      const m = el("button", {
        type: "button", class: `mark ${family(e.kind)}${e.seq === S.selected ? " selected" : ""}${e.seq > S.rev ? " after" : ""}`,
        "data-seq": String(e.seq), "data-kind": e.kind, style: { left: `${x(e.seq)}%` },
        title: `${e.seq} ${e.kind} ${e.stream} (${e.actor || "-"})`, "aria-label": `event ${e.seq} ${e.kind}`,
      });
      track.append(m);
    }
    if (origin && origin.head_seq) track.append(el("div", { class: "line origin", style: { left: `${x(origin.head_seq + 0.5)}%` }, title: `imported at seq ${origin.head_seq}` }));
    if (fork && fork.seq) track.append(el("div", { class: "line fork", style: { left: `${x(fork.seq)}%` }, title: `forked at seq ${fork.seq}` }));
    track.append(el("div", { class: "cursor", style: { left: `${x(S.rev + 0.5)}%` } }));
    frag.append(el("div", { class: "row", "data-work": work || "(project)" },
      el("div", { class: "label", text: work || "(project)" }), track));
  }
  if (order.length === 0) frag.append(el("p", { class: "muted", text: "no events match the filters" }));
  tl.replaceChildren(frag);
}

function renderEvents() {
  const tb = $("events").tBodies[0];
  const frag = document.createDocumentFragment();
  for (const e of S.events) frag.append(eventRow(e));
  tb.replaceChildren(frag);
}

function eventRow(e) {
  return el("tr", { "data-seq": String(e.seq), class: (e.seq === S.selected ? "selected " : "") + (e.seq > S.rev ? "after" : "") },
    el("td", { text: String(e.seq) }), el("td", { text: iso(e.occurred_at) }),
    el("td", { class: "kind " + family(e.kind), text: e.kind }), el("td", { text: e.stream }), el("td", { text: e.actor || "" }));
}

async function loadState(rev) {
  const n = ++S.stateSeq;
  let st;
  try {
    st = await api("state", { at: rev });
  } catch (e) {
    showError(e);
    return;
  }
  if (n !== S.stateSeq) return;
  renderState(st);
}

function renderState(st) {
  const box = $("state");
  box.setAttribute("data-rev", String(st.project_revision));
  $("state-rev").textContent = `as of revision ${st.project_revision}` + (st.project_revision === st.head ? " (the head)" : ` (head is ${st.head})`);
  const s = st.status;
  const sum = $("state-summary");
  sum.replaceChildren(
    el("span", { id: "s-active", "data-n": String(s.sessions.active), text: `${s.sessions.active} active sessions` + (s.sessions.stale ? ` (${s.sessions.stale} stale)` : "") }),
    el("span", { id: "s-claims", "data-n": String(s.live_claims), text: `${s.live_claims} live claims` }),
    el("span", { id: "s-items", "data-n": String(s.work_items), text: `${s.work_items} work items` }),
    el("span", { id: "s-ready", "data-n": String(s.ready_count), text: `${s.ready_count} ready` }),
  );
  const items = [...(st.ready.ready || []), ...(st.ready.not_ready || [])].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const wt = $("work-items").tBodies[0];
  wt.replaceChildren(...items.map((it) => el("tr", { "data-key": it.key, "data-status": it.status, "data-holder": it.holder ? it.holder.session_id : "" },
    el("td", { text: it.key }), el("td", { text: it.title }), el("td", { class: "status " + it.status, text: it.status }),
    el("td", { class: "holder", text: it.holder ? `${it.holder.agent} (${short(it.holder.session_id, 10)}…)` : "" }))));
  const sessions = st.sessions.sessions;
  $("sessions").tBodies[0].replaceChildren(...sessions.map((x) => el("tr", { "data-id": x.id, "data-status": x.status, "data-work": x.work },
    el("td", { text: x.id }), el("td", { text: x.work }), el("td", { text: x.agent }),
    el("td", { class: "status " + x.status, text: x.status + (x.stale ? " (stale)" : "") }))));
  const claims = items.filter((it) => it.holder);
  $("claims").tBodies[0].replaceChildren(...claims.map((it) => el("tr", { "data-work": it.key, "data-session": it.holder.session_id, "data-token": String(it.holder.fencing_token) },
    el("td", { text: it.key }), el("td", { text: it.holder.agent }), el("td", { text: it.holder.session_id }),
    el("td", { text: String(it.holder.fencing_token) }), el("td", { text: iso(it.holder.expires_at) }))));
}

function renderLineage() {
  const box = $("lineage");
  const s = S.headStatus || {};
  const parts = [];
  if (s.origin) {
    const o = s.origin;
    parts.push(el("div", { id: "origin", "data-seq": String(o.head_seq || "") },
      `Imported replica of project ${o.project_id} at seq ${o.head_seq} (head hash ${short(o.head_hash, 16)}…)` + (o.imported_at ? `, imported ${iso(o.imported_at)}` : "") + "."));
  }
  if (s.fork) {
    const f = s.fork;
    parts.push(el("div", { id: "fork", "data-seq": String(f.seq || "") },
      `Forked at seq ${f.seq} (hash ${short(f.hash, 16)}…)` + (f.at ? ` on ${iso(f.at)}` : "") + (f.origin ? ` from project ${f.origin.project_id} at seq ${f.origin.head_seq}` : "") + ": the events after it are this copy's own."));
  }
  box.replaceChildren(...parts);
  box.hidden = parts.length === 0;
}

// renderVerify shows the chain's verification: green only for a passed
// verification of the very head the page shows.
function renderVerify() {
  const box = $("verify");
  const v = S.verify;
  let state, title, detail;
  if (S.verifyError) {
    state = "unverified"; title = "chain not verified"; detail = "verification did not run: " + S.verifyError;
  } else if (!v) {
    state = "unverified"; title = "chain not verified yet"; detail = "verifying…";
  } else if (!v.ok || v.error) {
    state = "failed";
    title = "VERIFICATION FAILED";
    const bad = (v.checks || []).filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    detail = (v.first_bad_seq ? `first bad seq ${v.first_bad_seq}: ${v.problem}` : "") || bad.join("; ") || (v.error && v.error.message) || "";
  } else if (v.project_revision !== S.head || v.head_hash !== S.headHash) {
    state = "stale"; title = `verified up to revision ${v.project_revision}`; detail = `the head is ${S.head}: re-verifying…`;
  } else {
    // Honest: without anchors the chain is only intact (a rewritten and
    // re-hashed history would pass too); the verdict says so.
    state = v.anchored > 0 ? "verified" : "intact"; title = v.verdict || "chain intact";
    detail = `${v.events_checked} events, every hash recomputes, projections match; head hash ${short(v.head_hash, 16)}…; checked ${iso(v.verified_at)}`;
  }
  box.setAttribute("data-state", state);
  box.setAttribute("data-rev", v ? String(v.project_revision) : "");
  $("verify-title").textContent = title;
  $("verify-detail").textContent = detail;
}

let verifying = false;
async function verify(fresh) {
  if (verifying) return;
  verifying = true;
  try {
    for (;;) {
      const want = S.head;
      renderVerify();
      try {
        S.verify = await api("verify", fresh ? { fresh: 1 } : {});
        fresh = false;
        S.verifyError = "";
      } catch (e) {
        S.verify = null;
        S.verifyError = e.message || String(e);
      }
      renderVerify();
      if (S.verifyError || !S.verify || S.verify.project_revision >= S.head || S.head === want) break;
    }
  } finally {
    verifying = false;
  }
}

async function select(seq) {
  S.selected = seq;
  let e = S.bySeq.get(seq);
  if (!e) {
    const res = await api("log", { since: seq - 1, until: seq, limit: 1 });
    e = res.events[0];
  }
  if (!e) return;
  for (const m of document.querySelectorAll(".selected")) m.classList.remove("selected");
  for (const m of document.querySelectorAll(`[data-seq="${seq}"]`)) if (m.closest("#timeline, #events")) m.classList.add("selected");
  const rows = [
    ["seq", String(e.seq)], ["id", e.id], ["kind", e.kind], ["stream", e.stream], ["stream_version", String(e.stream_version)],
    ["occurred_at", `${iso(e.occurred_at)} (${e.occurred_at})`], ["actor", e.actor || ""], ["request_id", e.request_id || ""],
    ["work item", workOf(e) || "(project)"], ["prev_hash", e.prev_hash], ["hash", e.hash],
  ];
  $("envelope").tBodies[0].replaceChildren(...rows.map(([k, v]) => el("tr", { "data-field": k }, el("th", { text: k }),
    el("td", { id: k === "hash" ? "detail-hash" : k === "prev_hash" ? "detail-prev-hash" : undefined, class: k.includes("hash") ? "hash" : "", text: v }))));
  $("payload").textContent = JSON.stringify(e.payload, null, 2);
  $("detail").setAttribute("data-seq", String(e.seq));
  $("detail-empty").hidden = true;
  $("detail-body").hidden = false;
}

function setRev(rev, follow) {
  rev = Math.max(S.head > 0 ? 1 : 0, Math.min(S.head, rev));
  S.rev = rev;
  S.following = follow === undefined ? rev === S.head : follow;
  renderSlider();
  for (const m of document.querySelectorAll("#timeline .mark, #events tbody tr")) {
    m.classList.toggle("after", Number(m.getAttribute("data-seq")) > rev);
  }
  for (const c of document.querySelectorAll("#timeline .cursor")) c.style.left = `${x(rev + 0.5)}%`;
  clearTimeout(setRev.t);
  setRev.t = setTimeout(() => loadState(rev), 60);
}

// poll follows the log: a new head appends the new events without a
// reload; a head that moved back or changed hash reloads everything.
async function poll() {
  if (S.busy) return;
  S.busy = true;
  try {
    const h = await api("head");
    if (h.project_revision === S.head && h.head_hash === S.headHash) return;
    if (h.project_revision < S.head) { await reload(); return; }
    const check = S.head > 0 ? await api("log", { since: S.head - 1, until: S.head, limit: 1 }) : null;
    if (check && check.events.length && check.events[0].hash !== S.headHash) { await reload(); return; }
    const old = S.head;
    const st = await loadHeadState();
    const got = await fetchEvents(old);
    S.head = st.status.project_revision;
    S.headHash = st.status.head_hash;
    for (const e of got.events.filter(matchesAgent)) {
      if (e.seq > S.head || S.bySeq.has(e.seq)) continue;
      S.events.push(e);
      S.bySeq.set(e.seq, e);
    }
    if (S.following) S.rev = S.head;
    renderAll();
    if (S.following) await loadState(S.rev);
    verify();
    showError(null);
  } catch (e) {
    showError(e);
  } finally {
    S.busy = false;
  }
}

function onFilter() {
  S.filters = { work: $("f-work").value, session: $("f-session").value, agent: $("f-agent").value, kind: $("f-kind").value };
  S.busy = true;
  reload().catch(showError).finally(() => { S.busy = false; });
}

function init() {
  $("rev").addEventListener("input", (ev) => setRev(Number(ev.target.value)));
  $("rev-prev").addEventListener("click", () => setRev(S.rev - 1));
  $("rev-next").addEventListener("click", () => setRev(S.rev + 1));
  $("rev-head").addEventListener("click", () => setRev(S.head, true));
  for (const id of ["f-work", "f-session", "f-agent", "f-kind"]) $(id).addEventListener("change", onFilter);
  $("f-clear").addEventListener("click", () => {
    for (const id of ["f-work", "f-session", "f-agent", "f-kind"]) $(id).value = "";
    onFilter();
  });
  $("timeline").addEventListener("click", (ev) => {
    const m = ev.target.closest(".mark");
    if (m) select(Number(m.getAttribute("data-seq"))).catch(showError);
  });
  $("events").addEventListener("click", (ev) => {
    const r = ev.target.closest("tr[data-seq]");
    if (r) select(Number(r.getAttribute("data-seq"))).catch(showError);
  });
  $("verify-again").addEventListener("click", () => {
    S.verify = null;
    verify(true);
  });
  $("detail-at").addEventListener("click", () => { if (S.selected) setRev(S.selected); });
  S.busy = true;
  Promise.all([loadKinds(), reload()])
    .then(() => { document.body.setAttribute("data-ready", "true"); })
    .catch(showError)
    .finally(() => { S.busy = false; });
  setInterval(poll, POLL_MS);
}

init();
