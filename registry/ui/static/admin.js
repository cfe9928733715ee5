// Look up by id or GUID; global and per-subject config and mode; the registry overview.

import { api, maybe, pool, enc } from "./api.js";
import { esc, pretty, codeBlock } from "./highlight.js";
import { contextOf } from "./list.js";
import { configRefusal, gate } from "./access.js";

const LEVELS = ["BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE"];
const MODES = ["READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT"];

export async function lookupView(el, query, stale) {
  const id = query.get("id") || "";
  const guid = query.get("guid") || "";
  let result = "";
  if (id || guid) {
    try {
      const sv = id ? await api(`schemas/ids/${enc(id)}`) : await api(`schemas/guids/${enc(guid)}`);
      const ids = guid ? await maybe(`schemas/guids/${enc(guid)}/ids`, {}, []) : [];
      const theId = id || (ids[0] && (ids[0].id ?? ids[0]));
      const uses = theId ? await maybe(`schemas/ids/${enc(theId)}/versions`, {}, []) : [];
      const type = sv.schemaType || "AVRO";
      result = `<div class="card" data-found>
        <h2>${id ? `Id ${esc(id)}` : `GUID ${esc(guid)}`} <span class="badge fmt">${esc(type)}</span></h2>
        ${guid && ids.length ? `<p>Ids: ${ids.map((x) => esc(typeof x === "object" ? `${x.id}${x.context && x.context !== "." ? " in " + x.context : ""}` : x)).join(", ")}</p>` : ""}
        ${sv.guid ? `<p>GUID <code>${esc(sv.guid)}</code></p>` : ""}
        <h3>Used by</h3><ul class="refs">${uses.map((u) => `<li><a data-row href="#/subject/${enc(u.subject)}/v/${u.version}">${esc(u.subject)} v${u.version}</a></li>`).join("") || '<li class="muted">no subject it may show</li>'}</ul>
        ${codeBlock(pretty(sv.schema, type), type)}</div>`;
    } catch (e) {
      result = `<p class="error" role="alert">${esc(e.message)}</p>`;
    }
  }
  if (stale()) return;
  el.innerHTML = `<h1>Look up a schema</h1>
  <form class="filters" id="lookup">
    <input type="search" name="key" value="${esc(id || guid)}" placeholder="id (e.g. 42) or GUID" aria-label="Id or GUID" autofocus>
    <button type="submit">Look up</button>
  </form>${result}`;
  el.querySelector("#lookup").onsubmit = (ev) => {
    ev.preventDefault();
    const key = new FormData(ev.target).get("key").trim();
    location.hash = /^\d+$/.test(key) ? `#/lookup?id=${enc(key)}` : `#/lookup?guid=${enc(key)}`;
  };
}

function selector(name, values, current) {
  return `<select name="${name}" aria-label="${name}">${values.map((v) => `<option${v === current ? " selected" : ""}>${v}</option>`).join("")}</select>`;
}

export async function configView(el, stale) {
  const [config, mode, subjects] = await Promise.all([maybe("config"), maybe("mode"), api("subjects")]);
  const found = await pool(subjects.slice(0, 200), 6, async (s) => {
    const [c, m] = await Promise.all([maybe(`config/${enc(s)}`), maybe(`mode/${enc(s)}`)]);
    return { s, c, m };
  });
  const overrides = found.filter(({ c, m }) => c || m);
  if (stale()) return;
  const level = config && (config.compatibilityLevel || config.compatibility);
  el.innerHTML = `<h1>Config and mode</h1>
  <form class="card form" id="global">
    <h2>Global</h2>
    <div class="row"><label>Compatibility ${selector("level", LEVELS, level)}</label>
    <label>Mode ${selector("mode", MODES, mode && mode.mode)}</label>
    <button type="submit" id="save-global">Save (admins)</button></div>
    <p id="global-note" class="muted" data-read-only hidden></p>
    <p id="saved" role="status"></p>
  </form>
  <form class="card form" id="subject">
    <h2>One subject</h2>
    <div class="row"><label>Subject <input name="subject" list="subject-names" required></label>
    <datalist id="subject-names">${subjects.slice(0, 500).map((s) => `<option value="${esc(s)}">`).join("")}</datalist>
    <label>Compatibility ${selector("level", ["", ...LEVELS], "")}</label>
    <label>Mode ${selector("mode", ["", ...MODES], "")}</label>
    <button type="submit" id="save-subject">Save (admins)</button></div>
    <p id="subject-note" class="muted" data-read-only hidden></p>
    <p id="subject-saved" role="status"></p>
  </form>
  <div class="card"><h2>Subjects with their own config or mode${subjects.length > 200 ? " (first 200 subjects)" : ""}</h2>
  ${overrides.length ? `<table><thead><tr><th>Subject</th><th>Level</th><th>Mode</th></tr></thead><tbody>${overrides.map(({ s, c, m }) => `<tr><td><a data-row href="#/subject/${enc(s)}">${esc(s)}</a></td><td>${c ? esc(c.compatibilityLevel || "") : "<span class=muted>global</span>"}</td><td>${m ? esc(m.mode) : "<span class=muted>global</span>"}</td></tr>`).join("")}</tbody></table>` : '<p class="muted">None.</p>'}</div>`;
  const save = async (out, calls) => {
    try {
      for (const [path, body] of calls) await api(path, { method: "PUT", body });
      out.className = "good";
      out.textContent = "Saved.";
    } catch (e) {
      out.className = "error";
      out.textContent = `Refused: ${e.message}`;
    }
  };
  // Save buttons follow what the user may change (see access.js): the global config at once,
  // one subject's as its name is typed
  const globalWhy = await configRefusal(null);
  if (stale()) return;
  gate(el.querySelector("#save-global"), el.querySelector("#global-note"), globalWhy);
  const saveSubject = el.querySelector("#save-subject"), subjectNote = el.querySelector("#subject-note");
  gate(saveSubject, subjectNote, globalWhy);
  const nameInput = el.querySelector("#subject input[name=subject]");
  let timer = null, accessSeq = 0;
  nameInput.oninput = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const mine = ++accessSeq;
      const name = nameInput.value.trim();
      const why = name ? await configRefusal(name) : globalWhy;
      if (mine === accessSeq) gate(saveSubject, subjectNote, why);
    }, 300);
  };
  el.querySelector("#global").onsubmit = (ev) => {
    ev.preventDefault();
    if (el.querySelector("#save-global").disabled) return;
    const f = new FormData(ev.target);
    save(el.querySelector("#saved"), [["config", { compatibility: f.get("level") }], ["mode", { mode: f.get("mode") }]]);
  };
  el.querySelector("#subject").onsubmit = (ev) => {
    ev.preventDefault();
    if (saveSubject.disabled) return;
    const f = new FormData(ev.target);
    const s = f.get("subject").trim();
    const calls = [];
    if (f.get("level")) calls.push([`config/${enc(s)}`, { compatibility: f.get("level") }]);
    if (f.get("mode")) calls.push([`mode/${enc(s)}`, { mode: f.get("mode") }]);
    save(el.querySelector("#subject-saved"), calls);
  };
}

export async function overviewView(el, stale) {
  const [subjects, contexts, latest, ready, version, config, mode] = await Promise.all([
    api("subjects"),
    api("contexts").catch(() => ["."]),
    api("schemas", { query: { latestOnly: "true" } }),
    api("ready").catch((e) => ({ ready: false, message: e.message })),
    maybe("v1/metadata/version"),
    maybe("config"),
    maybe("mode"),
  ]);
  const exporters = await exporterRows();
  if (stale()) return;
  const perFormat = new Map(), perContext = new Map();
  for (const c of contexts) perContext.set(c, 0);
  for (const s of latest) perFormat.set(s.schemaType || "AVRO", (perFormat.get(s.schemaType || "AVRO") || 0) + 1);
  for (const s of subjects) perContext.set(contextOf(s), (perContext.get(contextOf(s)) || 0) + 1);
  const table = (m, label) => `<table data-counts="${label}"><thead><tr><th>${label}</th><th>Subjects</th></tr></thead><tbody>${[...m.entries()].map(([k, v]) => `<tr data-key="${esc(k)}"><td>${esc(k)}</td><td>${v}</td></tr>`).join("")}</tbody></table>`;
  el.innerHTML = `<h1>Overview</h1>
  <section class="grid3">
    <div class="card"><h2>Registry</h2><dl class="facts">
      <dt>Subjects</dt><dd data-subjects>${subjects.length}</dd>
      <dt>Version</dt><dd>${esc((version && version.version) || "?")}</dd>
      <dt>Level</dt><dd>${esc((config && (config.compatibilityLevel || config.compatibility)) || "?")}</dd>
      <dt>Mode</dt><dd>${esc((mode && mode.mode) || "?")}</dd>
      <dt>Ready</dt><dd data-readiness="${ready.ready ? "true" : "false"}">${ready.ready ? "yes" : "no"}${ready.message ? ` <span class="muted">(${esc(ready.message)})</span>` : ""}</dd>
      ${"leader" in ready ? `<dt>Leader</dt><dd data-leader>${esc(ready.leader || "none")}${ready.is_leader ? " (this instance)" : ""}</dd>` : ""}
    </dl></div>
    <div class="card"><h2>Per format</h2>${table(perFormat, "Format")}</div>
    <div class="card"><h2>Per context</h2>${table(perContext, "Context")}</div>
  </section>
  ${exporters === null ? "" : exporterCard(exporters)}`;
}

// Schema exporters: state from /exporters/{name}/status, lag from /metrics (null: not allowed)
async function exporterRows() {
  let names;
  try { names = await api("exporters"); } catch { return null; }
  if (!names.length) return [];
  const metrics = await api("metrics").catch(() => "");
  const metric = (family, name) => {
    const m = String(metrics).match(new RegExp(`^${family}\\{exporter="${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\} (\\S+)$`, "m"));
    return m ? Number(m[1]) : null;
  };
  return pool(names, 4, async (name) => {
    const status = await maybe(`exporters/${enc(name)}/status`, {}, { state: "?" });
    return {
      name, state: status.state, trace: status.trace || "", offset: status.offset,
      lag: metric("schema_registry_exporter_lag_records", name),
      lagSeconds: metric("schema_registry_exporter_lag_seconds", name),
    };
  });
}

function exporterCard(rows) {
  const body = rows.map((r) => `<tr data-exporter="${esc(r.name)}"><td>${esc(r.name)}</td>
    <td data-state="${esc(r.state)}">${esc(r.state)}</td>
    <td data-lag>${r.lag === null ? "?" : r.lag}${r.lagSeconds ? ` <span class="muted">(${r.lagSeconds.toFixed(1)} s)</span>` : ""}</td>
    <td data-trace>${esc(r.trace)}</td></tr>`).join("");
  return `<section class="card"><h2>Exporters</h2>${rows.length ? `<table data-exporters>
    <thead><tr><th>Exporter</th><th>State</th><th>Lag (records)</th><th>Last error</th></tr></thead>
    <tbody>${body}</tbody></table>` : `<p class="muted">No exporters.</p>`}</section>`;
}
