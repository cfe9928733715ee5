// A subject: versions timeline, one version's schema (highlighted), id, GUID, references both
// ways, metadata, rule set, tags, config and mode, the history of changes from the audit trail;
// and the diff of two versions.

import { api, maybe, pool, enc } from "./api.js";
import { esc, pretty, codeBlock } from "./highlight.js";
import { fieldsOf, diffFields, explain } from "./fields.js";

const LABEL = { added: "added", removed: "removed", type: "type changed", default: "default changed" };

async function versionsOf(subject) {
  const [live, all] = await Promise.all([
    maybe(`subjects/${enc(subject)}/versions`, {}, []),
    maybe(`subjects/${enc(subject)}/versions`, { query: { deleted: "true" } }, []),
  ]);
  return { live: new Set(live), all };
}

function json(value) {
  return `<pre class="code small">${esc(JSON.stringify(value, null, 2))}</pre>`;
}

export async function subjectView(el, subject, version, query, stale) {
  const { live, all } = await versionsOf(subject);
  if (!all.length) {
    el.innerHTML = `<h1>${esc(subject)}</h1><p class="error" role="alert">Subject '${esc(subject)}' not found.</p>`;
    return;
  }
  const number = version ? parseInt(version, 10) : live.size ? Math.max(...live) : Math.max(...all);
  // the timeline shows ids for the 40 versions around the one shown (a subject may have many)
  const at = Math.max(0, all.indexOf(number));
  const near = all.slice(Math.max(0, at - 20), at + 20);
  if (!near.includes(number)) near.push(number);
  const details = await pool(near, 6, (v) => maybe(`subjects/${enc(subject)}/versions/${v}`, { query: { deleted: "true" } }));
  const byVersion = new Map(details.filter(Boolean).map((d) => [d.version, d]));
  const sv = byVersion.get(number);
  if (!sv) {
    el.innerHTML = `<h1>${esc(subject)}</h1><p class="error" role="alert">Version ${esc(version)} not found.</p>`;
    return;
  }
  const [referencedBy, config, mode, ownConfig, ownMode, history] = await Promise.all([
    maybe(`subjects/${enc(subject)}/versions/${number}/referencedby`, {}, []),
    maybe(`config/${enc(subject)}`, { query: { defaultToGlobal: "true" } }),
    maybe(`mode/${enc(subject)}`, { query: { defaultToGlobal: "true" } }),
    maybe(`config/${enc(subject)}`),
    maybe(`mode/${enc(subject)}`),
    // the subject's changes from the audit file (404 when the server keeps none)
    maybe(`audit/subjects/${enc(subject)}`, { query: { limit: 50 } }),
  ]);
  const users = (await pool(referencedBy || [], 4, (id) => maybe(`schemas/ids/${id}/versions`, {}, []))).flat();
  if (stale()) return;
  const type = sv.schemaType || "AVRO";
  const idx = all.indexOf(number);
  const prev = idx > 0 ? all[idx - 1] : null;
  const next = idx + 1 < all.length ? all[idx + 1] : null;
  const md = sv.metadata || null;
  const tags = md && md.tags ? Object.entries(md.tags) : [];
  el.innerHTML = `
  <h1 class="subject-title">${esc(subject)} <span class="badge fmt">${esc(type)}</span></h1>
  <p class="muted">Level <b data-level>${esc((config && (config.compatibilityLevel || config.compatibility)) || "?")}</b>${ownConfig ? "" : " (inherited)"} · mode <b>${esc((mode && mode.mode) || "?")}</b>${ownMode ? "" : " (inherited)"}
   · <a href="#/subject/${enc(subject)}/try">Try a change</a>
   ${all.length > 1 ? ` · <a href="#/subject/${enc(subject)}/diff/${prev ?? all[0]}/${prev ? number : all[1]}">Diff</a>` : ""}</p>
  <ol class="timeline" aria-label="Versions">${all.map((v) => {
    const d = byVersion.get(v);
    return `<li class="${v === number ? "current" : ""}${live.has(v) ? "" : " deleted"}">
      <a data-row href="#/subject/${enc(subject)}/v/${v}"${v === number ? ' aria-current="page"' : ""}>v${v}</a>
      ${d ? `<span class="muted">id ${d.id}</span>` : ""}${live.has(v) ? "" : ' <span class="badge del">deleted</span>'}</li>`;
  }).join("")}</ol>
  <div class="version-nav">
    ${prev !== null ? `<a data-prev href="#/subject/${enc(subject)}/v/${prev}">← v${prev}</a>` : ""}
    ${next !== null ? `<a data-next href="#/subject/${enc(subject)}/v/${next}">v${next} →</a>` : ""}
    ${prev !== null ? `<a href="#/subject/${enc(subject)}/diff/${prev}/${number}">diff v${prev} → v${number}</a>` : ""}
  </div>
  <section class="grid">
    <div class="card schema">
      <h2>Version ${number}</h2>
      <dl class="facts">
        <dt>Id</dt><dd data-id>${sv.id}</dd>
        ${sv.guid ? `<dt>GUID</dt><dd data-guid><a href="#/lookup?guid=${enc(sv.guid)}">${esc(sv.guid)}</a></dd>` : ""}
        <dt>Format</dt><dd>${esc(type)}</dd>
      </dl>
      ${codeBlock(pretty(sv.schema, type), type)}
    </div>
    <aside>
      <div class="card"><h2>References</h2>
        ${(sv.references || []).length ? `<ul class="refs">${sv.references.map((r) => `<li><code>${esc(r.name)}</code> → <a href="#/subject/${enc(r.subject)}/v/${r.version}">${esc(r.subject)} v${r.version}</a></li>`).join("")}</ul>` : '<p class="muted">None.</p>'}
        <h3>Referenced by</h3>
        ${users.length ? `<ul class="refs" data-referenced-by>${users.map((u) => `<li><a href="#/subject/${enc(u.subject)}/v/${u.version}">${esc(u.subject)} v${u.version}</a></li>`).join("")}</ul>` : '<p class="muted">Nothing it may show references it.</p>'}
      </div>
      <div class="card"><h2>Metadata</h2>${md ? json(md) : '<p class="muted">None.</p>'}
        ${tags.length ? `<h3>Tags</h3><ul>${tags.map(([k, v]) => `<li><code>${esc(k)}</code>: ${v.map((t) => `<span class="badge">${esc(t)}</span>`).join(" ")}</li>`).join("")}</ul>` : ""}
      </div>
      <div class="card"><h2>Rule set</h2>${sv.ruleSet ? json(sv.ruleSet) : '<p class="muted">None.</p>'}</div>
    </aside>
  </section>
  ${history ? historyCard(history) : ""}`;
}

// what the audit trail recorded of the subject, newest first
function historyCard(events) {
  if (!events.length) return '<section class="card" data-history><h2>History</h2><p class="muted">No recorded changes.</p></section>';
  const when = (t) => esc(String(t || "").replace("T", " ").replace(/\.\d+Z$/, " UTC"));
  const what = (e) => esc(String(e.operation || "").replace(/^schema-registry\./, ""));
  const result = (e) => e.outcome === "success" ? `<span class="badge">${e.status}</span>`
    : `<span class="badge del">${esc(e.outcome)} ${e.status}${e.errorCode ? ` · ${e.errorCode}` : ""}</span>${e.message ? ` <span class="muted">${esc(e.message)}</span>` : ""}`;
  return `<section class="card" data-history><h2>History</h2>
  <div class="table-wrap"><table class="fields">
    <thead><tr><th>Time</th><th>Who</th><th>Change</th><th>Version</th><th>Outcome</th></tr></thead>
    <tbody>${events.map((e) => `<tr data-operation="${what(e)}" data-outcome="${esc(e.outcome)}">
      <td>${when(e.time)}</td><td>${esc(e.principal || "")}</td><td><code>${what(e)}</code></td>
      <td>${e.version ?? ""}${e.schemaId != null ? ` <span class="muted">id ${e.schemaId}</span>` : ""}</td><td>${result(e)}</td></tr>`).join("")}
    </tbody></table></div></section>`;
}

// the verdict of registering version b's schema after version a at the subject's level
async function verdict(subject, a, target) {
  try {
    return await api(`compatibility/subjects/${enc(subject)}/versions/${a}`, {
      method: "POST",
      query: { verbose: "true" },
      body: { schema: target.schema, schemaType: target.schemaType || "AVRO", references: target.references || [] },
    });
  } catch (e) {
    return { error: e.message };
  }
}

// verbose answers end with context lines ({oldSchemaVersion: 2}, {oldSchema: '...'},
// {validateFields: ..., compatibility: ...}): shown apart from the reasons
export function isContext(m) {
  return typeof m === "string" && /^\{(oldSchemaVersion|oldSchema|validateFields|compatibility)\b/.test(m);
}

export function reasonList(messages, render) {
  const reasons = messages.filter((m) => !isContext(m));
  const context = messages.filter(isContext);
  return `${reasons.length ? `<ul class="reasons">${reasons.map(render).join("")}</ul>` : ""}${context.length ? `<details class="context"><summary>checked against</summary><ul>${context.map((m) => `<li><code>${esc(m)}</code></li>`).join("")}</ul></details>` : ""}`;
}

export function describeMessage(m) {
  if (typeof m !== "string") return JSON.stringify(m);
  const d = m.match(/description:'((?:[^']|'(?!,))*)'/);
  const t = m.match(/errorType:'([^']*)'/);
  return d ? `${t ? t[1] + ": " : ""}${d[1]}` : m;
}

export async function diffView(el, subject, a, b, stale) {
  const [va, vb, config] = await Promise.all([
    api(`subjects/${enc(subject)}/versions/${enc(a)}`, { query: { deleted: "true" } }),
    api(`subjects/${enc(subject)}/versions/${enc(b)}`, { query: { deleted: "true" } }),
    maybe(`config/${enc(subject)}`, { query: { defaultToGlobal: "true" } }),
  ]);
  const { all } = await versionsOf(subject);
  const check = await verdict(subject, va.version, vb);
  if (stale()) return;
  const ta = va.schemaType || "AVRO", tb = vb.schemaType || "AVRO";
  const left = fieldsOf(va.schema, ta), right = fieldsOf(vb.schema, tb);
  const rows = diffFields(left.fields, right.fields);
  const marksA = new Map(), marksB = new Map(), titlesA = new Map(), titlesB = new Map();
  for (const r of rows) {
    if (r.change === "same") continue;
    if (r.before && r.before.line !== undefined) { marksA.set(r.before.line, "m-" + r.change); titlesA.set(r.before.line, `${r.path}: ${LABEL[r.change]}`); }
    if (r.after && r.after.line !== undefined) { marksB.set(r.after.line, "m-" + r.change); titlesB.set(r.after.line, `${r.path}: ${LABEL[r.change]}`); }
  }
  const level = (config && (config.compatibilityLevel || config.compatibility)) || "?";
  const ok = check.is_compatible;
  const reasons = check.messages || [];
  const options = (sel) => all.map((v) => `<option${String(v) === String(sel) ? " selected" : ""}>${v}</option>`).join("");
  const changed = rows.filter((r) => r.change !== "same");
  el.innerHTML = `
  <h1><a href="#/subject/${enc(subject)}">${esc(subject)}</a>: v${va.version} → v${vb.version}</h1>
  <form class="filters" id="pick">
    <label>from <select name="a" aria-label="From version">${options(va.version)}</select></label>
    <label>to <select name="b" aria-label="To version">${options(vb.version)}</select></label>
  </form>
  <div class="verdict ${check.error ? "bad" : ok ? "good" : "bad"}" data-verdict="${check.error ? "error" : ok ? "compatible" : "incompatible"}" role="status">
    ${check.error ? `Could not check: ${esc(check.error)}` : ok ? `v${vb.version} is <b>compatible</b> with v${va.version} at level <b>${esc(level)}</b>` : `v${vb.version} is <b>not compatible</b> with v${va.version} at level <b>${esc(level)}</b>`}
    ${reasonList(reasons, (m) => `<li>${esc(explain(describeMessage(m), vb.schema))}</li>`)}
  </div>
  <h2>Fields <span class="muted">${changed.length} changed of ${rows.length}</span></h2>
  <div class="table-wrap"><table class="fields">
    <thead><tr><th>Field</th><th>Change</th><th>v${va.version}</th><th>v${vb.version}</th></tr></thead>
    <tbody>${rows.map((r) => `<tr class="c-${r.change}" data-field="${esc(r.path)}" data-change="${r.change}">
      <td><code>${esc(r.path)}</code></td><td>${r.change === "same" ? "" : `<span class="badge m-${r.change}">${LABEL[r.change]}</span>`}</td>
      <td>${r.before ? `${esc(r.before.type)}${r.before.def !== undefined ? ` <span class="muted">= ${esc(r.before.def)}</span>` : ""}` : ""}</td>
      <td>${r.after ? `${esc(r.after.type)}${r.after.def !== undefined ? ` <span class="muted">= ${esc(r.after.def)}</span>` : ""}` : ""}</td></tr>`).join("")}
    </tbody></table></div>
  <div class="side-by-side">
    <div class="card"><h2>v${va.version} <span class="muted">id ${va.id}</span></h2>${codeBlock(left.text, ta, marksA, titlesA)}</div>
    <div class="card"><h2>v${vb.version} <span class="muted">id ${vb.id}</span></h2>${codeBlock(right.text, tb, marksB, titlesB)}</div>
  </div>`;
  const pick = el.querySelector("#pick");
  pick.onchange = () => {
    const f = new FormData(pick);
    location.hash = `#/subject/${enc(subject)}/diff/${f.get("a")}/${f.get("b")}`;
  };
}
