// cordon console. Every text that came from a tool call, a path or a server is put on the
// page with textContent or createTextNode; this file never assigns innerHTML.
"use strict";

const MAX_ROWS = 5000;
const state = { csrf: "", records: [], selected: null, pending: [] };

// Characters that change how text around them is shown (bidirectional controls,
// zero-width and other format characters, control characters but newline and tab) are
// shown as `\u{XXXX}`: a command text cannot be reordered or hidden on the page
// ("Trojan Source"), the way cordon's terminal output escapes them.
const INVISIBLE = /(?![\n\t])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
function visible(s) {
  return s.replace(INVISIBLE, (ch) => "\\u{" + ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0") + "}");
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") node.className = v;
    else if (k === "on") for (const [ev, f] of Object.entries(v)) node.addEventListener(ev, f);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.appendChild(typeof c === "object" ? c : document.createTextNode(visible(String(c))));
  }
  return node;
}
const $ = (id) => document.getElementById(id);
const text = (v) => (v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v));
const pretty = (v) => (typeof v === "string" ? v : JSON.stringify(v, null, 2));

function notice(message, isError) {
  const n = $("notice");
  n.textContent = visible(String(message));
  n.className = isError ? "notice error" : "notice";
  n.hidden = false;
  clearTimeout(notice.timer);
  notice.timer = setTimeout(() => { n.hidden = true; }, 6000);
}

// ---- navigation -------------------------------------------------------------------
function show() {
  const page = (location.hash || "#decisions").slice(1);
  for (const p of ["decisions", "pending", "changes", "grants", "audit"]) {
    $("page-" + p).hidden = p !== page;
    $("tab-" + p).classList.toggle("active", p === page);
  }
  if (page === "audit") verify();
  if (page === "changes") loadChanges();
}
window.addEventListener("hashchange", show);

// ---- decisions --------------------------------------------------------------------
function decisionOf(r) { return r.decision || (r.verdict && r.verdict.decision) || ""; }
function targetOf(r) {
  if (r.event) return r.event + (r.pending ? " #" + r.pending : r.lease ? " lease " + r.lease : r.rule ? " " + r.rule : "");
  const input = r.input || {};
  for (const k of ["command", "path", "file_path", "url", "pattern"]) if (typeof input[k] === "string") return input[k];
  if (Array.isArray(input.argv)) return input.argv.join(" ");
  return text(input);
}
function ruleOf(r) {
  const s = r.source;
  if (!s || typeof s !== "object") return "";
  let out = s.step || "";
  if (s.rule) out += ": " + s.rule;
  if (s.file) out += " (" + s.file + (s.line ? ":" + s.line : "") + ")";
  return out;
}
function filters() {
  const t = (id) => { const v = $(id).value; return v ? new Date(v).getTime() : null; };
  return { session: $("f-session").value.trim(), tool: $("f-tool").value.trim(), decision: $("f-decision").value, since: t("f-since"), until: t("f-until") };
}
function matches(r, f) {
  if (f.session && r.session !== f.session) return false;
  if (f.tool && r.tool !== f.tool) return false;
  if (f.decision && decisionOf(r) !== f.decision) return false;
  if (f.since !== null || f.until !== null) {
    const at = Date.parse(r.time);
    if (isNaN(at)) return false;
    if (f.since !== null && at < f.since) return false;
    if (f.until !== null && at >= f.until) return false;
  }
  return true;
}
// How a run or call ended (as `run_ending` in cordon-store): null when the record does
// not say; a failure is never shown in the colour of an allow.
function ending(r) {
  const result = r.result && typeof r.result === "object" ? r.result : null;
  const status = r.phase === "end" ? r.exit_status : result ? result.exit_status : undefined;
  if (r.phase !== "end" && !result) return null;
  const notOk = result && result.ok === false;
  let t;
  if (r.timed_out === true) t = "timed out";
  else if (Number.isInteger(status) && status > 128 && status <= 192) t = "signal " + (status - 128);
  else if (Number.isInteger(status)) t = "exit " + status;
  else if (notOk) t = "failed";
  else return null;
  const n = (r.containment_blocked || []).length;
  if (n) t += ", containment blocked " + n;
  return { failed: r.timed_out === true || notOk || (Number.isInteger(status) && status !== 0), text: t };
}
function row(r) {
  const d = decisionOf(r);
  const end = ending(r);
  const tr = el("tr", { "data-seq": r.seq },
    el("td", { class: "mono" }, (r.time || "").replace("T", " ").replace("Z", "")),
    el("td", {}, text(r.session)),
    el("td", {}, text(r.tool || r.kind)),
    el("td", { class: "decision " + (end && end.failed ? "failed" : d), "data-ended": end ? end.text : "" }, d || (r.answer ? text(r.answer) : ""), r.phase && r.phase !== "decision" ? el("span", { class: "phase" }, " " + text(r.phase)) : null, end ? el("span", { class: "ending" }, " " + end.text) : null),
    el("td", { class: "target", title: targetOf(r) }, targetOf(r)),
    el("td", {}, ruleOf(r)));
  tr.addEventListener("click", () => open(r, tr));
  return tr;
}
function render() {
  const f = filters();
  const body = $("rows");
  const rows = [];
  queued.length = 0;
  for (let i = state.records.length - 1; i >= 0 && rows.length < SHOWN_ROWS; i--) {
    if (matches(state.records[i], f)) rows.push(row(state.records[i]));
  }
  body.replaceChildren(...rows);
  $("shown").textContent = rows.length + " shown of " + Math.min(state.records.length, MAX_ROWS);
}
// New records arrive faster than a page can draw them (a busy agent, or a page that
// reconnects to a backlog). They are kept at once, but drawn once per animation frame: all
// rows that arrived since the last frame go in with one insertion, and only the newest
// SHOWN_ROWS of them are drawn at all. A hidden tab draws nothing until it is shown.
const SHOWN_ROWS = 500;
const queued = [];
function add(r) {
  state.records.push(r);
  if (state.records.length > MAX_ROWS + MAX_ROWS / 5) state.records.splice(0, state.records.length - MAX_ROWS);
  if (!matches(r, filters())) return;
  queued.push(r);
  if (queued.length > SHOWN_ROWS) queued.splice(0, queued.length - SHOWN_ROWS);
  if (!add.frame) add.frame = requestAnimationFrame(flush);
}
function flush() {
  add.frame = 0;
  if (!queued.length) return;
  const batch = document.createDocumentFragment();
  for (let i = queued.length - 1; i >= 0; i--) batch.appendChild(row(queued[i]));
  queued.length = 0;
  const body = $("rows");
  body.insertBefore(batch, body.firstChild);
  let extra = body.childElementCount - SHOWN_ROWS;
  while (extra-- > 0) body.lastChild.remove();
  $("shown").textContent = body.childElementCount + " shown of " + Math.min(state.records.length, MAX_ROWS);
}
function section(title, ...content) { return [el("h3", {}, title), ...content.filter((c) => c !== null && c !== undefined)]; }
function fields(pairs) {
  const dl = el("dl");
  for (const [k, v] of pairs) if (v !== undefined && v !== null && v !== "") dl.append(el("dt", {}, k), el("dd", {}, text(v)));
  return dl;
}
function clock(ms) {
  const t = new Date(typeof ms === "number" ? ms : NaN);
  return isNaN(t.getTime()) ? "" : t.toISOString().slice(11, 23);
}
// The egress log of a run's end record: counts, each destination, then the events kept.
function egressView(g) {
  const n = (v) => (typeof v === "number" ? v : 0);
  const summary = el("p", { class: "egress-summary" }, n(g.total) + " requests: " + n(g.allowed) + " allowed, " + n(g.refused) + " refused, " + n(g.errors) + " failed" +
    (n(g.injected) ? ", " + n(g.injected) + " with a credential added" : "") + (n(g.omitted) ? " (" + n(g.omitted) + " not listed)" : ""));
  const dests = Array.isArray(g.destinations) ? g.destinations : [];
  const events = Array.isArray(g.events) ? g.events : [];
  const destTable = el("table", { class: "egress" }, el("thead", {}, el("tr", {}, el("th", {}, "destination"), el("th", {}, "allowed"), el("th", {}, "refused"))),
    el("tbody", {}, dests.map((d) => el("tr", { class: n(d.refused) ? "refused" : "" }, el("td", { class: "mono" }, text(d.host) + ":" + text(d.port)), el("td", {}, n(d.allowed)), el("td", {}, n(d.refused))))));
  const eventRows = events.map((e) => {
    const what = [e.method, text(e.host) + ":" + text(e.port) + (e.path ? text(e.path) : "")].filter(Boolean).join(" ");
    const note = [e.code !== "allow" ? e.code : "", e.credential ? "credential " + e.credential : "", e.status ? "status " + e.status : "", e.reason].filter(Boolean).map(text).join("; ");
    return el("tr", { "data-egress": text(e.decision) },
      el("td", { class: "mono" }, clock(e.time_ms)),
      el("td", { class: "decision " + (e.decision === "allow" ? "allow" : "deny") }, text(e.decision)),
      el("td", { class: "mono" }, what), el("td", {}, note));
  });
  const eventTable = el("table", { class: "egress" }, el("thead", {}, el("tr", {}, el("th", {}, "time"), el("th", {}, "decision"), el("th", {}, "request"), el("th", {}, "why"))), el("tbody", {}, eventRows));
  return [summary, destTable, eventTable];
}
function open(r, tr) {
  for (const s of document.querySelectorAll("tbody#rows tr.selected")) s.classList.remove("selected");
  tr.classList.add("selected");
  const d = $("detail");
  const parts = [el("button", { type: "button", on: { click: () => { d.hidden = true; } } }, "close")];
  parts.push(...section("Call", fields([["time", r.time], ["surface", r.kind], ["session", r.session], ["agent", r.agent], ["operation", r.operation_id], ["tool", r.tool], ["cwd", r.cwd], ["workspace", r.workspace]]), r.input !== undefined ? el("pre", {}, pretty(r.input)) : null));
  if (decisionOf(r) || r.reason) {
    const s = r.source || {};
    parts.push(...section("Verdict", fields([["decision", decisionOf(r)], ["reason", r.reason], ["step", s.step], ["rule", s.rule], ["file:line", s.file ? s.file + (s.line ? ":" + s.line : "") : ""], ["containment", r.containment], ["mode", r.mode], ["approval", r.approval], ["policy", r.policy_version]])));
  }
  const ops = r.blocked || r.findings || (r.verdict && r.verdict.findings);
  if (ops && ops.length) parts.push(...section("Operations", el("ul", {}, ops.map((o) => el("li", {}, [o.decision, o.op, o.target].filter(Boolean).join(" "))))));
  if (r.answer || r.lease || r.pending || r.answered_by) parts.push(...section("Human answer", fields([["answer", r.answer], ["by", r.answered_by], ["lease", r.lease], ["pending", r.pending], ["edited", r.edited ? "yes" : ""]])));
  const end = ending(r);
  if (r.exit_status !== undefined || r.tier || r.result) parts.push(...section("Run", fields([["ended", end ? end.text + (end.failed ? " (failed)" : "") : ""], ["exit status", r.exit_status], ["tier", r.tier], ["timed out", r.timed_out ? "yes" : ""]]), r.result ? el("pre", {}, pretty(r.result)) : null));
  if (r.containment_blocked && r.containment_blocked.length) parts.push(...section("Denial report", el("ul", {}, r.containment_blocked.map((b) => el("li", {}, b.kind + " " + b.target + ": " + b.detail)))));
  if (r.escalation) parts.push(...section("Escalation", el("pre", {}, pretty(r.escalation))));
  if (r.egress && typeof r.egress === "object") parts.push(...section("Egress log", ...egressView(r.egress)));
  parts.push(...section("Record", el("pre", { class: "raw" }, JSON.stringify(r, null, 2))));
  d.replaceChildren(...parts);
  d.hidden = false;
}

function connect() {
  const live = $("live");
  const es = new EventSource("/api/events");
  es.onopen = () => { live.textContent = "live"; live.className = "live"; };
  es.onerror = () => { live.textContent = "reconnecting…"; live.className = "live off"; };
  es.onmessage = (e) => {
    let r;
    try { r = JSON.parse(e.data); } catch (_) { return; }
    if (!r || typeof r !== "object") return;
    add(r);
    if (r.event || r.pending || r.lease) refreshSoon();
  };
  es.addEventListener("lagged", (e) => notice(e.data + " records were skipped because the page fell behind", true));
}

// ---- pending, leases, rules --------------------------------------------------------
async function post(path, body) {
  const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json", "x-cordon-csrf": state.csrf }, body: JSON.stringify(body), credentials: "same-origin" });
  let out = {};
  try { out = await res.json(); } catch (_) { out = { error: res.status + " " + res.statusText }; }
  if (!res.ok) { notice(out.error || "refused", true); return null; }
  notice(out.message || "done", false);
  refresh();
  return out;
}
function pendingCard(p) {
  const req = p.request || {};
  const verdict = p.verdict || {};
  const findings = (verdict.findings || []).filter((f) => f && (f.decision || f.op));
  const editor = el("textarea", { "aria-label": "edited input", spellcheck: "false" }, JSON.stringify(req.input || {}, null, 2));
  const editBox = el("div", { hidden: true }, el("p", { class: "muted" }, "Edit the input; the edited call is judged again and must not be denied."), editor,
    el("button", { type: "button", class: "primary", "data-act": "edited", on: { click: () => {
      let input;
      try { input = JSON.parse(editor.value); } catch (e) { notice("the edited input is not valid JSON: " + e.message, true); return; }
      post("/api/answer", { id: p.id, answer: "edited", input });
    } } }, "approve edited call"));
  const act = (word, label, cls, disabled, title) => el("button", { type: "button", class: cls, "data-act": word, disabled, title, on: { click: () => post("/api/answer", { id: p.id, answer: word }) } }, label);
  // The rules "always allow" may save: the exact call first, then any generalisation
  // with an example of what else it allows. Each is its own button; no other rule can
  // be saved.
  const options = (p.suggestions && p.suggestions.length) ? p.suggestions : (p.suggestion ? [{ rule: p.suggestion }] : []);
  const always = options.map((o, i) => el("button", { type: "button", "data-act": i === 0 ? "always" : "always-" + (i + 1),
    title: "saves " + o.rule, "data-also": o.example || "",
    on: { click: () => post("/api/answer", { id: p.id, answer: "always", rule: i + 1 }) } },
    i === 0 ? "always allow this exact call" : "always allow " + text(o.rule)));
  return el("div", { class: "card", "data-pending": p.id },
    el("div", { class: "meta" }, "#" + p.id + " · " + text(p.created) + (p.machine ? " · machine " + text(p.machine) : "") + (p.session ? " · session " + p.session : "") + (p.operation_id ? " · operation " + p.operation_id : "") + (verdict.workspace ? " · workspace " + text(verdict.workspace) : "")),
    el("div", {}, el("strong", {}, text(p.tool)), " ", el("code", { class: "call" }, targetOf({ input: req.input }))),
    el("h3", {}, "Exact call"), el("pre", { class: "call-json" }, pretty(req)),
    el("h3", {}, "Consequence"), el("p", { class: "reason" }, text(verdict.reason)),
    findings.length ? el("ul", {}, findings.map((f) => el("li", {}, [f.decision, f.op || f.kind, f.target || f.path || f.program].filter(Boolean).map(text).join(" ")))) : null,
    el("h3", {}, "Rules \u201calways allow\u201d may save"), options.length
      ? el("ul", { class: "rule-options" }, options.map((o, i) => el("li", {}, el("code", {}, text(o.rule)), " ",
          el("span", { class: "muted" }, o.example ? "(also allows e.g. " + text(o.example) + ")" : i === 0 ? "(this exact call)" : ""))))
      : el("p", {}, el("span", { class: "muted" }, "none: no narrow rule can be saved for this call")),
    el("div", { class: "actions" },
      act("once", "approve once", "primary"),
      act("session", "approve for the session", "", !p.session, p.session ? "" : "this call has no session"),
      ...(always.length ? always : [act("always", "always allow", "", true, "no rule was suggested")]),
      el("button", { type: "button", "data-act": "edit", on: { click: () => { editBox.hidden = !editBox.hidden; } } }, "edit input…"),
      act("deny", "deny", "danger")),
    editBox);
}
function renderState(s) {
  state.csrf = s.csrf;
  state.pending = s.pending;
  $("pending-count").textContent = s.pending.length;
  $("pending-count").classList.toggle("some", s.pending.length > 0);
  // Cards already on the page are kept as they are, so an input being edited survives
  // the periodic refresh; only new approvals are drawn and answered ones removed.
  const kept = new Map();
  for (const c of $("pending").querySelectorAll("[data-pending]")) kept.set(c.getAttribute("data-pending"), c);
  $("pending").replaceChildren(...(s.pending.length ? s.pending.map((p) => kept.get(String(p.id)) || pendingCard(p)) : [el("p", { class: "muted" }, "No pending approvals.")]));
  $("leases").replaceChildren(...(s.leases.length ? s.leases.map((l) => el("tr", { "data-lease": l.id },
    el("td", {}, l.id), el("td", {}, l.scope), el("td", { class: "mono" }, l.fingerprint), el("td", {}, l.created), el("td", {}, l.expires || "never"), el("td", {}, l.answer),
    el("td", {}, el("button", { type: "button", class: "danger", on: { click: () => post("/api/revoke", { id: l.id }) } }, "revoke")))) : [el("tr", {}, el("td", { colspan: 7, class: "muted" }, "No active leases."))]));
  $("rules").replaceChildren(...(s.rules.length ? s.rules.map((r) => el("tr", {},
    el("td", { class: "mono" }, r.rule), el("td", {}, r.tool_kind), el("td", {}, r.created), el("td", {}, r.created_by),
    el("td", {}, el("button", { type: "button", class: "danger", on: { click: () => post("/api/forget", { rule: r.rule }) } }, "forget")))) : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No remembered rules."))]));
  // A shared store: every machine's decisions as shipped there, each with its machine.
  $("fleet").hidden = !s.decisions;
  if (s.decisions) $("fleet-rows").replaceChildren(...(s.decisions.length ? s.decisions.map((d) => el("tr", { "data-machine": d.machine },
    el("td", {}, text(d.at)), el("td", {}, text(d.machine)), el("td", {}, text((d.record && (d.record.tool || d.record.kind || d.record.event)) || "")),
    el("td", {}, text(decisionOf(d.record || {}))), el("td", {}, text(targetOf(d.record || {}))))) : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No decisions shipped yet."))]));
  $("audit-path").textContent = s.audit;
  $("store-path").textContent = s.store;
}
async function refresh() {
  try {
    const res = await fetch("/api/state", { credentials: "same-origin" });
    if (!res.ok) { notice("cannot load the console's state: " + (await res.text()), true); return; }
    renderState(await res.json());
  } catch (e) { notice("cannot reach the console: " + e.message, true); }
}
function refreshSoon() {
  if (refreshSoon.timer) return;
  refreshSoon.timer = setTimeout(() => { refreshSoon.timer = null; refresh(); }, 200);
}
// ---- change sets ------------------------------------------------------------------
// Everything in a change set (paths, reasons, flags, diffs) was written by the sandboxed
// command: it is put on the page as text only, like every other untrusted string here.
async function loadChanges() {
  try {
    const res = await fetch("/api/changes", { credentials: "same-origin" });
    let out = {};
    try { out = await res.json(); } catch (_) { out = { error: res.status + " " + res.statusText }; }
    if (!res.ok) { notice("cannot list the change sets: " + (out.error || res.status), true); return; }
    renderChanges(out);
  } catch (e) { notice("cannot reach the console: " + e.message, true); }
}
function renderChanges(c) {
  const sets = Array.isArray(c.sets) ? c.sets : [];
  $("changes-count").textContent = sets.length;
  $("changes-count").classList.toggle("some", sets.length > 0);
  const parts = sets.length ? sets.map(changeCard) : [el("p", { class: "muted" }, "No change sets wait.")];
  if (c.running) parts.push(el("p", { class: "muted" }, c.running + " change set" + (c.running === 1 ? " belongs to a run" : "s belong to runs") + " still going; shown here once the run ends."));
  $("changes").replaceChildren(...parts);
}
function changeCard(s) {
  const entries = el("div", { class: "entries", hidden: true });
  const act = (word, label, cls) => el("button", { type: "button", class: cls, "data-act": word, on: { click: () => changeAction(s, word) } }, label);
  const n = (v) => (typeof v === "number" ? v : 0);
  return el("div", { class: "card change " + text(s.state), "data-changes": s.id },
    el("div", { class: "meta" }, text(s.id) + " · " + text(s.created) + " · " + text(s.state)),
    el("div", {}, el("code", { class: "call" }, (s.command || []).map(text).join(" "))),
    el("p", {}, "roots: ", ...(s.roots || []).map((r) => el("code", { class: "root" }, text(r)))),
    el("ul", { class: "why" }, (s.why || []).map((w) => el("li", {}, text(w)))),
    s.error ? el("p", { class: "reason refused" }, "cannot review it: " + text(s.error)) : null,
    el("p", { class: "muted" }, n(s.changes) + " changes: " + n(s.held) + " held, " + n(s.conflicts) + " conflicting, " + n(s.refused) + " refused"),
    el("div", { class: "actions" },
      el("button", { type: "button", "data-act": "show", on: { click: () => toggleEntries(s, entries) } }, "show changes"),
      act("apply", "Apply", "primary"),
      n(s.conflicts) ? act("apply-overwrite", "Apply, overwriting conflicts", "") : null,
      act("discard", "Discard", "danger")),
    entries);
}
async function toggleEntries(s, box) {
  if (!box.hidden) { box.hidden = true; return; }
  box.replaceChildren(el("p", { class: "muted" }, "reviewing…"));
  box.hidden = false;
  try {
    const res = await fetch("/api/changes/" + encodeURIComponent(s.id), { credentials: "same-origin" });
    let d = {};
    try { d = await res.json(); } catch (_) { d = { error: res.status + " " + res.statusText }; }
    if (!res.ok) { box.replaceChildren(el("p", { class: "reason refused" }, text(d.error || "refused"))); return; }
    const list = Array.isArray(d.entries) ? d.entries : [];
    box.replaceChildren(...[
      d.diffs === true ? null : el("p", { class: "muted" }, "diffs " + text(d.diffs)),
      ...(list.length ? list.map(entryView) : [el("p", { class: "muted" }, "No changes are left in this set.")]),
      d.omitted ? el("p", { class: "muted" }, d.omitted + " more changes not listed; `cordon changes show " + text(d.id) + "` prints them all") : null,
    ].filter(Boolean));
  } catch (e) { box.replaceChildren(el("p", { class: "reason refused" }, "cannot reach the console: " + e.message)); }
}
function entryView(e) {
  const verdict = e.refused ? ["refused", e.refused] : e.held ? ["held", e.held] : e.conflict ? ["conflict", e.conflict] : null;
  const flags = Array.isArray(e.flags) ? e.flags : [];
  return el("div", { class: "entry" + (verdict ? " " + verdict[0] : ""), "data-path": text(e.path) },
    el("div", {}, el("span", { class: "change" }, text(e.change)), " ", el("code", { class: "path" }, text(e.path))),
    verdict ? el("p", { class: "reason " + verdict[0] }, verdict[0] + ": " + text(verdict[1])) : null,
    flags.length ? el("ul", { class: "flags" }, flags.map((f) => el("li", {}, text(f)))) : null,
    typeof e.diff === "string" ? diffView(e.diff) : null);
}
function diffView(d) {
  const kind = (l) => (l.startsWith("+++ ") || l.startsWith("--- ") ? "head" : l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "");
  return el("pre", { class: "diff" }, d.split("\n").map((l) => el("span", { class: kind(l) }, l + "\n")));
}
async function changeAction(s, word) {
  if (word === "discard" && !confirm("Discard " + s.id + "? Nothing of it lands, and this cannot be undone.")) return;
  const out = word === "discard"
    ? await post("/api/changes/discard", { id: s.id })
    : await post("/api/changes/apply", { id: s.id, overwrite: word === "apply-overwrite" });
  if (out) showApplied(out);
  loadChanges();
}
// What an apply or discard did stays on the page (the notice fades): what landed, what
// was refused, what is left in the set.
function showApplied(out) {
  const box = $("changes-result");
  const parts = [el("button", { type: "button", on: { click: () => { box.hidden = true; } } }, "close"), el("p", {}, text(out.message))];
  const group = (title, items) => (items.length ? [el("h3", {}, title), el("ul", {}, items.map((i) => el("li", {}, i)))] : []);
  const why = (list) => (Array.isArray(list) ? list : []).map((x) => text(x.path) + ": " + text(x.reason));
  for (const r of Array.isArray(out.roots) ? out.roots : []) {
    parts.push(el("h3", {}, "into ", el("code", {}, text(r.root))));
    const landed = (Array.isArray(r.landed) ? r.landed : []).map((l) => text(l.change) + " " + text(l.path) + (l.entries ? " (" + l.entries + " entries)" : ""));
    if (r.unlisted) landed.push(r.unlisted + " more not listed");
    parts.push(...group("landed", landed), ...group("refused (never lands)", why(r.refused)), ...group("left: conflicts (the host's version was kept)", why(r.conflicts)),
      ...group("left: held", why(r.held)), ...group("left: kept", (Array.isArray(r.kept) ? r.kept : []).map(text)), ...group("host changes kept over the run's deletion", why(r.spared)));
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}

async function verify() {
  const box = $("verify");
  box.textContent = "verifying…";
  try {
    const v = await (await fetch("/api/verify", { credentials: "same-origin" })).json();
    box.className = "verify " + v.status;
    if (v.status === "ok") box.textContent = "Intact: " + v.records + " records, head " + v.head;
    else if (v.status === "broken") box.textContent = "BROKEN at line " + v.line + " (" + v.why + "): " + v.detail + "; " + v.records_ok + " records verified before it";
    else box.textContent = "Cannot verify: " + (v.detail || v.error);
  } catch (e) { box.className = "verify error"; box.textContent = "Cannot verify: " + e.message; }
}

document.addEventListener("DOMContentLoaded", () => {
  for (const id of ["f-session", "f-tool", "f-decision", "f-since", "f-until"]) $(id).addEventListener("input", render);
  $("f-clear").addEventListener("click", () => { $("filters").reset(); render(); });
  $("verify-again").addEventListener("click", verify);
  $("changes-reload").addEventListener("click", loadChanges);
  show();
  refresh();
  if (location.hash !== "#changes") loadChanges();
  connect();
  setInterval(refresh, 3000);
});
