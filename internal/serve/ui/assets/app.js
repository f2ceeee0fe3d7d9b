// awr ui: a read-only view of one project's log. Plain JS, no network
// beyond this page's own /api/ (every read there is one call through the
// project door, with `--at` semantics).
"use strict";

const PAGE = 1000;      // events per /api/log request (the most the API gives)
const MARKS_MAX = 2000; // a mark per event on the timeline up to this many events
const LANES_PAGE = 50;  // lanes drawn at once on a longer log
const LANE_BUCKETS = 200; // intervals of revisions per lane
const LANES_EVERY_MS = 10000; // how often a growing long log redraws its lanes
const POLL_MS = 1000;   // how often the head is polled
const ROW = 22;         // the height of a row of the event list (px)
const MAX_SCROLL = 8e6; // the tallest scroll height the list uses (px)
const CACHE_MAX = 5000; // events the list keeps in memory at most
const FILTERED_MAX = 5000; // matching events the filtered list holds at most
const TABLE_MAX = 100;  // rows of each table of the state panel
const OPTIONS_MAX = 300; // options of the session filter
const SESSIONS_PAGE = 100; // sessions per page of the state panel (the API's default)
const SESSIONS_KNOWN = 5000; // sessions the page remembers (for labels and lanes) at most
const EXPORT_MAX = 100000; // events of one export at most (the API's bound)

const S = {
  head: 0,            // the head revision the page knows
  headHash: "",
  events: [],         // the marks of the timeline (filtered), oldest first; small logs only
  bySeq: new Map(),   // seq -> event, of the marks
  truncated: false,
  sessions: new Map(), // session id -> session: those of the pages read, SESSIONS_KNOWN at most
  // The sessions table of the state panel: one page of /api/sessions
  // (newest first) at the revision shown; back holds the cursors of the
  // pages before it, so that "newer" goes back without a read of them all.
  sessionPage: { rev: 0, res: null, cursor: "", back: [], gen: 0 },
  headStatus: null,   // status at the head (origin, fork)
  rev: 0,             // the revision the slider shows
  following: true,    // the slider follows the head
  verify: null,       // the last /api/verify answer
  verifyError: "",
  selected: 0,        // the seq shown in the detail panel
  filters: { work: "", session: "", agent: "", kind: "", since: "", until: "" },
  // range is the time range of the filters as seqs: (since, until].
  range: { since: 0, until: 0 },
  stateSeq: 0,        // a counter that drops stale state answers
  busy: false,
  // The event list: a window of rows over every event (by seq) or over
  // the matching events loaded so far (filtered).
  // gen counts the starts of the filtered list: a page read for an
  // earlier start is dropped.
  list: { filtered: false, items: [], more: 0, cache: new Map(), forced: null, atEnd: true, inflight: null, gen: 0 },
  axis: { from: 0, to: 0 },
  // The lanes of a long log: the page shown and the answer drawn.
  lanes: { by: "", offset: 0, gen: 0, res: null, at: 0, drawnAt: 0 },
  t0: performance.now(),
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

// fetchEvents reads the events after since that match the filters, for
// the marks of the timeline: a page at a time, never more than MARKS_MAX.
async function fetchEvents(since) {
  const out = [];
  if (S.range.empty || (S.range.until && Math.max(since, S.range.since) >= S.range.until)) return { events: out, head: S.head };
  const f = S.filters;
  for (;;) {
    const res = await api("log", { since: Math.max(since, S.range.since), until: S.range.until || "", work: f.work, session: f.session, kind: f.kind, limit: PAGE });
    for (const e of res.events) out.push(e);
    if (!res.next_since || out.length >= MARKS_MAX) {
      S.truncated = !!res.next_since;
      return { events: out, head: res.project_revision };
    }
    since = res.next_since;
  }
}

// remember keeps sessions for labels and lanes, the SESSIONS_KNOWN read
// last at most: a long log's sessions are read a page at a time, never all.
function remember(sessions) {
  for (const s of sessions) {
    S.sessions.delete(s.id);
    S.sessions.set(s.id, s);
  }
  while (S.sessions.size > SESSIONS_KNOWN) S.sessions.delete(S.sessions.keys().next().value);
}

async function loadHeadState() {
  const st = await api("state");
  remember([...st.sessions.sessions].reverse());
  // A small log's timeline draws every session's span on its work
  // item's lane: read the rest of its sessions (a few pages at most,
  // since it has at most MARKS_MAX events).
  if (st.status.project_revision <= MARKS_MAX) {
    for (let cursor = st.sessions.next_cursor; cursor;) {
      const res = await api("sessions", { at: st.project_revision, cursor, limit: 200 });
      remember([...res.sessions].reverse());
      cursor = res.next_cursor;
    }
  } else {
    // The agents of a long log, for the agent filter: its lanes by agent
    // (the server's aggregate over the sessions), not every session.
    const lanes = await api("lanes", { by: "agent", buckets: 1, limit: 200, at: st.project_revision });
    S.agents = lanes.lanes.map((l) => l.key).filter(Boolean);
  }
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
  // The latest OPTIONS_MAX sessions read (and the one chosen): a select
  // of every session of a long log would be thousands of nodes. Any
  // other is a click away in the sessions table, which pages through them all.
  const ids = sessions.map((s) => s.id).slice(-OPTIONS_MAX);
  if (S.filters.session && !ids.includes(S.filters.session)) ids.push(S.filters.session);
  setOptions($("f-session"), ids, S.filters.session, (id) => {
    const s = S.sessions.get(id);
    return s ? `${short(id, 10)}… ${s.agent} on ${s.work}` : id;
  });
  const agents = new Set([...sessions.map((s) => s.agent), ...(S.agents || [])].filter(Boolean));
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

// small says whether the log is small enough for a mark per event.
const small = () => S.head <= MARKS_MAX;

// reload reads everything again: the head's state, the marks (a small
// log), the list's window, the slider's state, the verification.
async function reload() {
  if (!S.head) {
    // The head first (one event read), then the state: the page says
    // where the log stands before anything else is read.
    const h = await api("head");
    S.head = h.project_revision;
    S.headHash = h.head_hash;
    renderHead();
  }
  const st = await loadHeadState();
  S.head = st.status.project_revision;
  S.headHash = st.status.head_hash;
  $("project-name").textContent = st.status.project_name || "";
  document.title = "awr ui: " + (st.status.project_name || "");
  if (small()) {
    const got = await fetchEvents(0);
    S.events = got.events.filter(matchesAgent);
  } else {
    S.events = [];
  }
  S.bySeq = new Map(S.events.map((e) => [e.seq, e]));
  if (S.following || S.rev > S.head || S.rev < 1) S.rev = S.head;
  renderHead();
  await resetList();
  // The list opens at its end: the latest events.
  renderAll();
  scrollToRow(Math.max(listLength() - Math.floor($("list").clientHeight / ROW), 0));
  renderList();
  loadAxis();
  await loadState(S.rev);
  verify();
}

function renderAll() {
  renderHead();
  renderSlider();
  renderTimeline();
  renderList();
}

function renderHead() {
  $("head").textContent = `head revision ${S.head}` + (S.headHash ? ` · head hash ${short(S.headHash, 16)}…` : "");
  $("head").setAttribute("data-head", String(S.head));
  if (!document.body.dataset.headMs) document.body.dataset.headMs = String(Math.round(performance.now()));
  const L = S.list;
  const n = L.filtered ? L.items.length : S.head;
  $("f-count").textContent = L.filtered ? `${n} matching event${n === 1 ? "" : "s"} loaded` + (L.more ? " (more after them)" : "") : `${S.head} events`;
  $("list-count").textContent = $("f-count").textContent;
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

// laneOf is the timeline lane of an event: its work item (the default),
// its session, or its agent (the envelope's actor), as the lanes select
// says; "" is the project's own lane.
function laneOf(e) {
  switch ($("lanes").value) {
    case "session": return sessionOf(e);
    case "agent": return e.actor || "";
  }
  return S.filters.work || workOf(e);
}

function renderTimeline() {
  if (!small()) {
    renderLanes().catch(showError);
    return;
  }
  const rows = new Map();
  const order = [];
  const rowOf = (work) => {
    if (!rows.has(work)) { rows.set(work, []); order.push(work); }
    return rows.get(work);
  };
  for (const e of S.events) {
    rowOf(laneOf(e)).push(e);
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
    frag.append(el("div", { class: "row", "data-work": work || "(project)", "data-lane": work || "(project)" },
      el("div", { class: "label", title: work || "(project)", text: work || "(project)" }), track));
  }
  if (order.length === 0) frag.append(el("p", { class: "muted", text: "no events match the filters" }));
  tl.replaceChildren(frag);
}

// ---- The lanes of a long log: too many events for a mark each, so each
// lane (a page of LANES_PAGE at a time) is one canvas of the sessions
// active in each of LANE_BUCKETS intervals of seqs, from the server's
// aggregate over the sessions (never over the events); a lane of a few
// sessions draws each one's span. A click goes to the first event of the
// interval, or to the start of the session clicked.

async function renderLanes() {
  const L = S.lanes;
  const my = ++L.gen;
  const by = $("lanes").value;
  if (L.by !== by) { L.by = by; L.offset = 0; }
  const res = await api("lanes", { by, buckets: LANE_BUCKETS, offset: L.offset, limit: LANES_PAGE });
  if (my !== L.gen) return;
  L.res = res;
  L.at = res.project_revision;
  L.drawnAt = performance.now();
  const tl = $("timeline");
  const frag = document.createDocumentFragment();
  const last = Math.min(res.offset + res.lanes.length, res.total);
  const prev = el("button", { type: "button", id: "lanes-prev", text: "◀ earlier lanes" });
  const next = el("button", { type: "button", id: "lanes-next", text: "later lanes ▶" });
  prev.disabled = res.offset === 0;
  next.disabled = last >= res.total;
  frag.append(el("div", { class: "lanes-pager muted", "data-total": String(res.total) },
    el("span", { text: res.total ? `${S.head} events: lanes ${res.offset + 1}–${last} of ${res.total} (by ${by}), each the sessions active per interval of revisions` : "no sessions yet" }), prev, next));
  for (const lane of res.lanes) {
    const canvas = el("canvas", { class: "lane-canvas", "data-lane": lane.key, height: "24" });
    const track = el("div", { class: "track" }, canvas);
    track.append(el("div", { class: "cursor", style: { left: `${x(S.rev + 0.5)}%` } }));
    const title = `${lane.key || "(none)"}: ${lane.sessions} session${lane.sessions === 1 ? "" : "s"}, ${lane.open} active, revisions ${lane.first_seq}–${lane.last_seq}`;
    frag.append(el("div", { class: "row", "data-lane": lane.key || "(none)", title },
      el("div", { class: "label", title, text: lane.key || "(none)" }), track));
  }
  tl.replaceChildren(frag);
  prev.addEventListener("click", () => { L.offset = Math.max(0, L.offset - LANES_PAGE); renderLanes().catch(showError); });
  next.addEventListener("click", () => { L.offset += LANES_PAGE; renderLanes().catch(showError); });
  for (const c of tl.querySelectorAll("canvas.lane-canvas")) drawLane(c, res.lanes.find((l) => l.key === c.dataset.lane), res);
  document.body.dataset.lanes = String(res.lanes.length);
  document.body.dataset.lanesTotal = String(res.total);
}

function drawLane(canvas, lane, res) {
  const w = Math.max(canvas.parentElement.clientWidth, 100);
  canvas.width = w;
  const ctx = canvas.getContext("2d");
  const rev = res.project_revision;
  const px = (seq) => ((seq - 1) / rev) * w;
  if (lane.spans) {
    for (const sp of lane.spans) {
      ctx.fillStyle = sp.to ? "#2f6fdb" : "#8fb0ea";
      ctx.fillRect(px(sp.from), 6, Math.max(px(sp.to || rev + 1) - px(sp.from), 2), 12);
    }
    return;
  }
  const most = Math.max(1, ...lane.active);
  const bw = w / lane.active.length;
  lane.active.forEach((n, i) => {
    if (!n) return;
    ctx.fillStyle = `rgba(47,111,219,${0.2 + 0.8 * (n / most)})`;
    ctx.fillRect(i * bw, 6, Math.max(bw, 1), 12);
  });
}

// laneClick is where a click on a lane's canvas goes: the start of the
// session under it, or the first event of the interval.
function laneClick(canvas, offsetX) {
  const res = S.lanes.res;
  const lane = res && res.lanes.find((l) => l.key === canvas.dataset.lane);
  if (!lane) return 0;
  const rev = res.project_revision;
  const w = canvas.clientWidth || canvas.width;
  const seq = Math.min(rev, Math.max(1, Math.floor((offsetX / w) * rev) + 1));
  if (lane.spans) {
    const sp = lane.spans.find((p) => p.from <= seq && (p.to || rev) >= seq) || lane.spans.reduce((a, b) => (Math.abs(b.from - seq) < Math.abs(a.from - seq) ? b : a));
    return sp.from;
  }
  const n = lane.active.length;
  const i = Math.min(n - 1, Math.floor((offsetX / w) * n));
  // The server counts seq in interval floor((seq-1)*n/rev): the first
  // seq of interval i is ceil(i*rev/n)+1.
  return Math.ceil((i * rev) / n) + 1;
}

// ---- The event list: a window of at most a screenful of rows over the
// whole log (one row per seq, read a page at a time as it scrolls) or
// over the matching events loaded so far. The page never holds more
// than the rows on screen, whatever the log's length.

function listLength() {
  return S.list.filtered ? S.list.items.length : S.head;
}

// itemAt is the event of row i, or null while it is being read.
function itemAt(i) {
  const L = S.list;
  if (L.filtered) return L.items[i] || null;
  return L.cache.get(i + 1) || null;
}

// indexOf is the row of seq, -1 when the list does not hold it.
function indexOf(seq) {
  const L = S.list;
  if (!L.filtered) return seq >= 1 && seq <= S.head ? seq - 1 : -1;
  let lo = 0, hi = L.items.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const m = L.items[mid].seq;
    if (m === seq) return mid;
    if (m < seq) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

const anyFilter = () => !!(S.filters.work || S.filters.session || S.filters.kind || S.filters.agent || S.range.since || S.range.until || S.range.empty);

// resetList starts the list over: every event, or the matching events
// from the first (a small log's marks are those already).
async function resetList(from) {
  const L = S.list;
  L.filtered = anyFilter();
  L.gen++;
  L.inflight = null;
  L.items = [];
  L.more = 0;
  if (L.filtered) {
    if (small()) {
      L.items = S.events.slice();
      L.more = S.truncated ? S.events[S.events.length - 1].seq : 0;
    } else {
      await loadMatching(from || 0);
    }
  }
  sizeList();
}

// loadMatching reads the next page of matching events after since.
async function loadMatching(since) {
  const L = S.list;
  if (S.range.empty || (S.range.until && Math.max(since, S.range.since) >= S.range.until)) { L.more = 0; $("list-more").hidden = true; return; }
  const f = S.filters;
  const gen = L.gen;
  const res = await api("log", { since: Math.max(since, S.range.since), until: S.range.until || "", work: f.work, session: f.session, kind: f.kind, limit: PAGE });
  if (gen !== L.gen) return;
  for (const e of res.events) if (matchesAgent(e)) L.items.push(e);
  if (L.items.length > FILTERED_MAX) L.items = L.items.slice(L.items.length - FILTERED_MAX);
  L.more = res.next_since || 0;
  $("list-more").hidden = !L.more;
}

function sizeList() {
  const total = listLength() * ROW;
  $("list-spacer").style.height = `${Math.min(total, MAX_SCROLL)}px`;
}

// ratio maps the scroll position to the list's full height (1 unless
// the list is taller than MAX_SCROLL).
function ratio() {
  const box = $("list");
  const total = listLength() * ROW;
  const view = box.clientHeight;
  if (total <= MAX_SCROLL || MAX_SCROLL <= view) return 1;
  return (total - view) / (MAX_SCROLL - view);
}

// firstRow is the row at the top of the list's window and its offset.
function firstRow() {
  const box = $("list");
  const L = S.list;
  if (L.forced && Math.abs(box.scrollTop - L.forced.top) < 2) return { i: L.forced.i, off: 0 };
  L.forced = null;
  const v = box.scrollTop * ratio();
  const i = Math.floor(v / ROW);
  return { i, off: v - i * ROW };
}

// scrollToRow puts row i at the top of the list's window.
function scrollToRow(i) {
  const box = $("list");
  const top = Math.round((i * ROW) / ratio());
  box.scrollTop = top;
  S.list.forced = { i, top: box.scrollTop };
}

function renderList() {
  sizeList();
  const box = $("list");
  const n = listLength();
  const { i: first, off } = firstRow();
  const count = Math.min(Math.ceil(box.clientHeight / ROW) + 1, Math.max(n - first, 0));
  const rowsEl = $("list-rows");
  rowsEl.style.transform = `translateY(${box.scrollTop - off}px)`;
  const frag = document.createDocumentFragment();
  let missing = false;
  for (let k = 0; k < count; k++) {
    const e = itemAt(first + k);
    if (!e) {
      missing = true;
      frag.append(el("div", { class: "vrow loading", "data-seq": S.list.filtered ? "" : String(first + k + 1) }, el("span", { text: String(first + k + 1) }), el("span", { text: "…" })));
      continue;
    }
    frag.append(el("div", { class: "vrow" + (e.seq === S.selected ? " selected" : "") + (e.seq > S.rev ? " after" : ""), "data-seq": String(e.seq) },
      el("span", { text: String(e.seq) }), el("span", { text: iso(e.occurred_at) }),
      el("span", { class: "kind " + family(e.kind), text: e.kind }), el("span", { text: e.stream }), el("span", { text: e.actor || "" })));
  }
  rowsEl.replaceChildren(frag);
  rowsEl.dataset.first = String(first);
  S.list.atEnd = first + count >= n;
  updateExport();
  if (missing) fillWindow(first, count);
  if (S.list.filtered && S.list.more && first + count >= n - 1 && !S.list.inflight) {
    const p = loadMatching(S.list.more).then(() => { if (S.list.inflight === p) S.list.inflight = null; renderHead(); renderList(); }).catch(showError);
    S.list.inflight = p;
  }
}

// fillWindow reads the rows first..first+count of the whole log (one
// page) and draws the list again.
function fillWindow(first, count) {
  const L = S.list;
  if (L.filtered) return;
  const since = first, until = Math.min(first + count, S.head);
  const key = `${since}-${until}`;
  if (L.inflight === key) return;
  L.inflight = key;
  api("log", { since, until, limit: Math.min(Math.max(until - since, 1), PAGE) }).then((res) => {
    for (const e of res.events) L.cache.set(e.seq, e);
    while (L.cache.size > CACHE_MAX) L.cache.delete(L.cache.keys().next().value);
    if (L.inflight === key) L.inflight = null;
    renderList();
  }).catch((e) => { L.inflight = null; showError(e); });
}

// jump shows the event seq: its row at the top of the list, its detail,
// and the URL that opens the same view. It records how long it took
// (data-jump-ms on the body) once the row and the detail are drawn.
async function jump(seq, how) {
  const t0 = performance.now();
  seq = Math.max(1, Math.min(S.head, Number(seq)));
  if (!seq) return;
  let i = indexOf(seq);
  if (i < 0 && S.list.filtered && !small()) {
    // The list starts again at seq. Until its first page is in, no other
    // page may be read into it: the read of the next page that a render
    // starts near the list's end (renderList) waits while this one is in
    // flight, and the page after the old list's end is forgotten.
    S.list.gen++;
    S.list.items = [];
    S.list.more = 0;
    const p = loadMatching(seq - 1);
    S.list.inflight = p;
    try {
      await p;
    } finally {
      if (S.list.inflight === p) S.list.inflight = null;
    }
    sizeList();
    i = S.list.items.length ? 0 : -1;
    if (i === 0) seq = S.list.items[0].seq;
  }
  if (i < 0 && S.list.filtered) i = 0;
  if (!S.list.filtered && !S.list.cache.has(seq)) {
    const res = await api("log", { since: seq - 1, until: Math.min(seq - 1 + 40, S.head), limit: 40 });
    for (const e of res.events) S.list.cache.set(e.seq, e);
  }
  scrollToRow(Math.max(i, 0));
  await select(seq);
  renderList();
  document.body.dataset.jumpSeq = String(seq);
  document.body.dataset.jumpHow = how || "";
  document.body.dataset.jumpMs = String(Math.round(performance.now() - t0));
}

// ---- The time axis: events per interval of time, from the server's
// aggregate (a binary search per bucket, never a scan).

async function loadAxis() {
  const a = S.axis;
  const res = await api("histogram", { buckets: 100, from: a.from || "", to: a.to || "" });
  const max = Math.max(1, ...res.buckets.map((b) => b.count));
  const bars = res.buckets.map((b) => el("div", {
    class: "bar" + (b.count ? "" : " empty"), "data-first": String(b.first_seq || ""), "data-start": String(b.start), "data-end": String(b.end),
    title: `${iso(b.start)} – ${iso(b.end)}: ${b.count} events` + (b.first_seq ? `, from seq ${b.first_seq}` : ""),
    style: { height: `${Math.max(2, Math.round((b.count / max) * 100))}%` },
  }));
  $("axis").replaceChildren(...bars);
  $("axis-range").textContent = res.buckets.length ? `${iso(res.from)} – ${iso(res.to)}` : "";
  a.shownFrom = res.from; a.shownTo = res.to;
}

function zoomAxis(from, to) {
  S.axis.from = Math.max(0, Math.round(from));
  S.axis.to = Math.round(to);
  loadAxis().catch(showError);
}

// ---- Search: the project's full-text index; a hit goes to its event.

async function search(q, go) {
  const box = $("search-results");
  if (!q) { box.hidden = true; box.replaceChildren(); setURL(); return; }
  const res = await api("search", { q, limit: 20 });
  box.hidden = false;
  box.replaceChildren(...(res.results.length ? res.results.map((h) => el("button", { type: "button", "data-seq": String(h.seq), class: "hit" },
    `seq ${h.seq} · ${h.kind} ${h.ref} · ${h.title}` + (h.snippet ? ` — ${h.snippet}` : ""))) : [el("p", { class: "muted", text: `nothing matches "${q}"` })]));
  setURL();
  if (go && res.results.length) await jump(res.results[0].seq, "search");
}

// ---- Diff: awr diff between two revisions, field by field.

async function loadDiff(from, to) {
  const box = $("diff");
  if (from === "" || from === undefined) { box.replaceChildren(); return; }
  const res = await api("diff", { from, to });
  const parts = [el("p", { class: "muted", text: `revision ${res.from} → ${res.to}: ${res.changed} entities changed, ${res.events.length} events` +
    (res.hidden ? ` (${res.hidden} bookkeeping fields left out: awr diff --from ${res.from} --to ${res.to} --all)` : "") })];
  const models = [["sessions", "sessions"], ["claims", "claims"], ["checkpoints", "checkpoints"], ["knowledge", "knowledge"],
    ["work_items", "work items"], ["bindings", "bindings"], ["seats", "seats"]];
  for (const [key, name] of models) {
    for (const en of res.changes[key] || []) {
      const mark = en.change === "added" ? "+" : en.change === "removed" ? "-" : "~";
      const fields = en.fields.map((f) => el("div", { class: "field", "data-field": f.field },
        en.change === "added" ? `${f.field}: ${show(f.field, f.after)}` : en.change === "removed" ? `${f.field}: ${show(f.field, f.before)}`
          : `${f.field}: ${show(f.field, f.before)} → ${show(f.field, f.after)}`));
      parts.push(el("div", { class: "entity", "data-model": key, "data-id": en.id, "data-change": en.change },
        el("strong", { text: `${mark} ${name} ${en.id}` + (en.work && en.work !== en.id ? ` (${en.work})` : "") }), ...fields));
    }
  }
  box.replaceChildren(...parts);
  box.dataset.from = String(res.from);
  box.dataset.to = String(res.to);
  setURL();
}

// show renders a diff's value whole, as awr diff prints it: a string
// without quotes, a time (a field named *_at) in ISO 8601 UTC, null as
// "(none)".
const show = (field, v) => {
  if (v === undefined || v === null) return "(none)";
  if (typeof v === "string") return v === "" ? '""' : v;
  const leaf = field.slice(field.lastIndexOf(".") + 1);
  if (typeof v === "number" && leaf.endsWith("_at") && v > 0) return new Date(v).toISOString();
  return JSON.stringify(v);
};

// ---- The URL: every view is one (?at, ?event, ?q, ?from and ?to).

function setURL() {
  const q = new URLSearchParams();
  if (!S.following) q.set("at", String(S.rev));
  if (S.selected) q.set("event", String(S.selected));
  const text = $("q").value.trim();
  if (text) q.set("q", text);
  const d = $("diff");
  if (d.dataset.from) { q.set("from", d.dataset.from); if (d.dataset.to) q.set("to", d.dataset.to); }
  const url = location.pathname + (q.toString() ? "?" + q : "");
  if (url !== location.pathname + location.search) history.replaceState(null, "", url);
  updateExport();
}

// updateExport points the export link at the range the list shows: from
// its first row on, with the filters, at the revision shown.
function updateExport() {
  const ex = new URLSearchParams();
  const first = itemAt(Number($("list-rows").dataset.first || 0));
  ex.set("since", String(first ? first.seq - 1 : S.range.since));
  if (S.range.until) ex.set("until", String(S.range.until));
  if (S.filters.kind) ex.set("kind", S.filters.kind);
  if (S.filters.work) ex.set("work", S.filters.work);
  if (S.filters.session) ex.set("session", S.filters.session);
  if (!S.following) ex.set("at", String(S.rev));
  ex.set("limit", String(EXPORT_MAX));
  $("export").href = "/api/export?" + ex;
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
  wt.replaceChildren(...capped(items, 4, (it) => el("tr", { "data-key": it.key, "data-status": it.status, "data-holder": it.holder ? it.holder.session_id : "" },
    el("td", { text: it.key }), el("td", { text: it.title }), el("td", { class: "status " + it.status, text: it.status }),
    el("td", { class: "holder", text: it.holder ? `${it.holder.agent} (${short(it.holder.session_id, 10)}…)` : "" }))));
  // The sessions: the first page (newest first) comes with the state;
  // "older" reads the next from /api/sessions at the same revision.
  const P = S.sessionPage;
  P.gen++;
  P.rev = st.project_revision;
  P.cursor = "";
  P.back = [];
  renderSessions(st.sessions);
  const claims = items.filter((it) => it.holder);
  $("claims").tBodies[0].replaceChildren(...capped(claims, 5, (it) => el("tr", { "data-work": it.key, "data-session": it.holder.session_id, "data-token": String(it.holder.fencing_token) },
    el("td", { text: it.key }), el("td", { text: it.holder.agent }), el("td", { text: it.holder.session_id }),
    el("td", { text: String(it.holder.fencing_token) }), el("td", { text: iso(it.holder.expires_at) }))));
}

// renderSessions draws one page of the sessions table (res, an answer
// of /api/sessions) with its place among them all and the controls that
// read the page before and after it.
function renderSessions(res) {
  const P = S.sessionPage;
  P.res = res;
  remember([...res.sessions].reverse());
  $("sessions").tBodies[0].replaceChildren(...res.sessions.map((x) => el("tr", { "data-id": x.id, "data-status": x.status, "data-work": x.work, title: "show this session's events" },
    el("td", { text: x.id }), el("td", { text: x.work }), el("td", { text: x.agent }),
    el("td", { class: "status " + x.status, text: x.status + (x.stale ? " (stale)" : "") }))));
  const first = P.back.length * SESSIONS_PAGE;
  const pager = $("sessions-pager");
  pager.dataset.total = String(res.sessions_total);
  pager.dataset.first = String(res.sessions.length ? first + 1 : 0);
  pager.dataset.last = String(first + res.sessions.length);
  $("sessions-shown").textContent = res.sessions_total
    ? `sessions ${first + 1}–${first + res.sessions.length} of ${res.sessions_total}, newest first` + (res.stale_count ? ` (${res.stale_count} stale)` : "")
    : "no sessions";
  $("sessions-newer").disabled = P.back.length === 0;
  $("sessions-older").disabled = !res.next_cursor;
}

// pageSessions reads the sessions page after (dir 1) or before (dir -1)
// the one shown, at the revision of the state shown.
async function pageSessions(dir) {
  const P = S.sessionPage;
  if (!P.res) return;
  let cursor;
  if (dir > 0) {
    if (!P.res.next_cursor) return;
    cursor = P.res.next_cursor;
  } else {
    if (!P.back.length) return;
    cursor = P.back[P.back.length - 1];
  }
  const gen = P.gen;
  const res = await api("sessions", { at: P.rev, cursor, limit: SESSIONS_PAGE });
  if (gen !== P.gen) return;
  if (dir > 0) P.back.push(P.cursor); else P.back.pop();
  P.cursor = cursor;
  renderSessions(res);
}

// capped maps the first TABLE_MAX of rows to table rows with fn, and
// says in a last row of cols columns how many more there are: the state
// panel of a long log stays a few hundred nodes.
function capped(rows, cols, fn) {
  const out = rows.slice(0, TABLE_MAX).map(fn);
  if (rows.length > TABLE_MAX) {
    out.push(el("tr", { class: "more" }, el("td", { colspan: String(cols), class: "muted", text: `and ${rows.length - TABLE_MAX} more (awr ready --all, awr session list)` })));
  }
  return out;
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
  let e = S.bySeq.get(seq) || S.list.cache.get(seq);
  if (!e && S.list.filtered) { const i = indexOf(seq); if (i >= 0) e = S.list.items[i]; }
  if (!e) {
    const res = await api("log", { since: seq - 1, until: seq, limit: 1 });
    e = res.events[0];
  }
  if (!e) return;
  for (const m of document.querySelectorAll(".selected")) m.classList.remove("selected");
  for (const m of document.querySelectorAll(`[data-seq="${seq}"]`)) if (m.closest("#timeline, #list")) m.classList.add("selected");
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
  setURL();
}

function setRev(rev, follow) {
  rev = Math.max(S.head > 0 ? 1 : 0, Math.min(S.head, rev));
  S.rev = rev;
  S.following = follow === undefined ? rev === S.head : follow;
  renderSlider();
  for (const m of document.querySelectorAll("#timeline .mark, #list .vrow")) {
    m.classList.toggle("after", Number(m.getAttribute("data-seq")) > rev);
  }
  for (const c of document.querySelectorAll("#timeline .cursor")) c.style.left = `${x(rev + 0.5)}%`;
  setURL();
  clearTimeout(setRev.t);
  setRev.t = setTimeout(() => loadState(rev), 60);
}

// poll follows the log: a new head appends the new events without a
// reload (the list grows, and shows them when it was at its end); a head
// that moved back or changed hash reloads everything.
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
    const wasAtEnd = S.list.atEnd;
    const st = await loadHeadState();
    S.head = st.status.project_revision;
    S.headHash = st.status.head_hash;
    if (small()) {
      const got = await fetchEvents(old);
      for (const e of got.events.filter(matchesAgent)) {
        if (e.seq > S.head || S.bySeq.has(e.seq)) continue;
        S.events.push(e);
        S.bySeq.set(e.seq, e);
        if (S.list.filtered) S.list.items.push(e);
      }
    } else if (S.list.filtered && !S.list.more) {
      S.list.more = old;
    }
    const fresh = await api("log", { since: old, until: S.head, limit: Math.min(Math.max(S.head - old, 1), PAGE) });
    for (const e of fresh.events) S.list.cache.set(e.seq, e);
    if (S.following) S.rev = S.head;
    renderHead();
    renderSlider();
    if (small()) renderTimeline();
    else if (performance.now() - S.lanes.drawnAt > LANES_EVERY_MS) renderTimeline();
    sizeList();
    if (wasAtEnd) scrollToRow(Math.max(listLength() - Math.floor($("list").clientHeight / ROW), 0));
    renderList();
    document.body.dataset.liveSeq = String(S.head);
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
  S.filters = { work: $("f-work").value, session: $("f-session").value, agent: $("f-agent").value, kind: $("f-kind").value,
    since: $("f-since").value.trim(), until: $("f-until").value.trim() };
  S.busy = true;
  timeRange().then(reload).catch(showError).finally(() => { S.busy = false; });
}

// timeRange turns the filters' times into seqs (the server's seek): the
// events from the first at or after since to the last before until.
async function timeRange() {
  const f = S.filters;
  S.range = { since: 0, until: 0, empty: false };
  if (f.since) {
    const r = await api("seek", { time: f.since });
    S.range.since = r.seq ? r.seq - 1 : r.project_revision;
  }
  if (f.until) {
    const r = await api("seek", { time: f.until });
    // Every event is at or after until (seq 1): nothing lies before it.
    if (r.seq === 1) S.range.empty = true;
    S.range.until = r.seq ? Math.max(r.seq - 1, 0) : r.project_revision;
  }
  if (S.range.until && S.range.until <= S.range.since) S.range.empty = true;
}

// openURL opens the view the page's URL names: ?at=REV (the state at a
// revision), ?event=SEQ (an event), ?q=WORDS (a search, and its first
// hit unless an event is named), ?from=R1&to=R2 (a diff).
async function openURL() {
  const q = new URLSearchParams(location.search);
  if (q.has("at")) setRev(Number(q.get("at")), false);
  if (q.has("q")) { $("q").value = q.get("q"); await search(q.get("q"), !q.has("event")); }
  if (q.has("event")) await jump(Number(q.get("event")), "url");
  if (q.has("from")) {
    $("diff-from").value = q.get("from");
    $("diff-to").value = q.get("to") || "";
    await loadDiff(q.get("from"), q.get("to") || "");
  }
}

function init() {
  $("rev").addEventListener("input", (ev) => setRev(Number(ev.target.value)));
  $("rev-prev").addEventListener("click", () => setRev(S.rev - 1));
  $("rev-next").addEventListener("click", () => setRev(S.rev + 1));
  $("rev-head").addEventListener("click", () => setRev(S.head, true));
  for (const id of ["f-work", "f-session", "f-agent", "f-kind", "f-since", "f-until"]) $(id).addEventListener("change", onFilter);
  $("lanes").addEventListener("change", () => renderTimeline());
  $("f-clear").addEventListener("click", () => {
    for (const id of ["f-work", "f-session", "f-agent", "f-kind", "f-since", "f-until"]) $(id).value = "";
    onFilter();
  });
  $("timeline").addEventListener("click", (ev) => {
    const m = ev.target.closest(".mark");
    if (m) select(Number(m.getAttribute("data-seq"))).catch(showError);
    const c = ev.target.closest("canvas.lane-canvas");
    if (c) {
      const seq = laneClick(c, ev.offsetX);
      if (seq) jump(seq, "lane").catch(showError);
    }
  });
  $("list").addEventListener("click", (ev) => {
    const r = ev.target.closest(".vrow[data-seq]");
    if (r && r.dataset.seq) select(Number(r.dataset.seq)).catch(showError);
  });
  let frame = 0;
  $("list").addEventListener("scroll", () => {
    if (frame) return;
    frame = requestAnimationFrame(() => { frame = 0; renderList(); });
  });
  $("list-more").addEventListener("click", () => {
    if (S.list.more) loadMatching(S.list.more).then(() => { renderHead(); renderList(); }).catch(showError);
  });
  $("sessions-older").addEventListener("click", () => pageSessions(1).catch(showError));
  $("sessions-newer").addEventListener("click", () => pageSessions(-1).catch(showError));
  // A session of the table, however far back, is one click from its events.
  $("sessions").addEventListener("click", (ev) => {
    const r = ev.target.closest("tr[data-id]");
    if (!r) return;
    const sel = $("f-session");
    if (![...sel.options].some((o) => o.value === r.dataset.id)) sel.append(el("option", { value: r.dataset.id, text: r.dataset.id }));
    sel.value = r.dataset.id;
    onFilter();
  });
  $("search-form").addEventListener("submit", (ev) => { ev.preventDefault(); search($("q").value.trim(), true).catch(showError); });
  $("search-results").addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-seq]");
    if (b) jump(Number(b.dataset.seq), "search").catch(showError);
  });
  $("seq-form").addEventListener("submit", (ev) => { ev.preventDefault(); jump(Number($("seq-jump").value), "seq").catch(showError); });
  $("time-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const t0 = performance.now();
      const res = await api("seek", { time: $("time-jump").value.trim() });
      await jump(res.seq || S.head, "time");
      document.body.dataset.jumpMs = String(Math.round(performance.now() - t0));
    } catch (e) { showError(e); }
  });
  $("jump-first").addEventListener("click", () => jump(1, "first").catch(showError));
  $("jump-last").addEventListener("click", () => jump(S.head, "last").catch(showError));
  $("axis").addEventListener("click", (ev) => {
    const b = ev.target.closest(".bar");
    if (b && b.dataset.first) jump(Number(b.dataset.first), "axis").catch(showError);
  });
  $("axis").addEventListener("dblclick", (ev) => {
    const b = ev.target.closest(".bar");
    if (b) zoomAxis(Number(b.dataset.start), Number(b.dataset.end));
  });
  $("axis-whole").addEventListener("click", () => zoomAxis(0, 0));
  const pan = (dir) => {
    const a = S.axis, w = (a.shownTo || 0) - (a.shownFrom || 0);
    if (w > 0) zoomAxis(Math.max(0, a.shownFrom + dir * w), a.shownTo + dir * w);
  };
  $("axis-prev").addEventListener("click", () => pan(-1));
  $("axis-next").addEventListener("click", () => pan(1));
  $("diff-form").addEventListener("submit", (ev) => { ev.preventDefault(); loadDiff($("diff-from").value.trim(), $("diff-to").value.trim()).catch(showError); });
  $("verify-again").addEventListener("click", () => {
    S.verify = null;
    verify(true);
  });
  $("detail-at").addEventListener("click", () => { if (S.selected) setRev(S.selected); });
  S.busy = true;
  Promise.all([loadKinds(), reload()])
    .then(() => { document.body.setAttribute("data-ready", "true"); return openURL(); })
    .then(() => { document.body.setAttribute("data-opened", "true"); })
    .catch(showError)
    .finally(() => { S.busy = false; });
  setInterval(poll, POLL_MS);
}

init();
