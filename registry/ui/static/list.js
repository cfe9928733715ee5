// The subjects list: search, format / context / deleted filters, paginated (the names come
// from one GET /subjects; details are fetched for the visible page only).

import { api, maybe, pool, enc } from "./api.js";
import { esc } from "./highlight.js";

const PAGE = 25;
let typesCache = null; // subject -> schemaType of its latest version (only for the format filter)

export function contextOf(subject) {
  const m = subject.match(/^:(\.[^:]*):/);
  return m ? m[1] : ".";
}

async function schemaTypes(deleted) {
  if (!typesCache || typesCache.deleted !== deleted) {
    const all = await api("schemas", { query: { latestOnly: "true", deleted: deleted ? "true" : null } });
    const map = new Map();
    for (const s of all) map.set(s.subject, s.schemaType || "AVRO");
    typesCache = { deleted, map };
  }
  return typesCache.map;
}

export async function subjectsView(el, query, stale) {
  const q = query.get("q") || "";
  const format = query.get("format") || "";
  const ctx = query.get("ctx") || "";
  const deleted = query.get("deleted") === "1";
  const page = Math.max(0, parseInt(query.get("page") || "0", 10) || 0);
  const [live, withDeleted, contexts] = await Promise.all([
    api("subjects"),
    deleted ? api("subjects", { query: { deleted: "true" } }) : null,
    api("contexts").catch(() => ["."]),
  ]);
  const liveSet = new Set(live);
  let names = (withDeleted || live).slice().sort();
  if (q) { const needle = q.toLowerCase(); names = names.filter((s) => s.toLowerCase().includes(needle)); }
  if (ctx) names = names.filter((s) => contextOf(s) === ctx);
  if (format) { const types = await schemaTypes(deleted); names = names.filter((s) => (types.get(s) || "") === format); }
  const pages = Math.max(1, Math.ceil(names.length / PAGE));
  const shown = names.slice(page * PAGE, page * PAGE + PAGE);
  const rows = await pool(shown, 6, async (s) => {
    const gone = !liveSet.has(s);
    const [latest, config, mode] = await Promise.all([
      maybe(`subjects/${enc(s)}/versions/latest`, { query: { deleted: gone ? "true" : null } }),
      maybe(`config/${enc(s)}`, { query: { defaultToGlobal: "true" } }),
      maybe(`mode/${enc(s)}`, { query: { defaultToGlobal: "true" } }),
    ]);
    return { s, gone, latest, config, mode };
  });
  if (stale()) return;
  const link = (changes) => {
    const p = new URLSearchParams({ q, format, ctx, deleted: deleted ? "1" : "", page: String(page), ...changes });
    for (const [k, v] of [...p.entries()]) if (!v || (k === "page" && v === "0")) p.delete(k);
    const s = p.toString();
    return "#/subjects" + (s ? "?" + s : "");
  };
  const ctxOptions = contexts.map((c) => `<option value="${esc(c)}"${c === ctx ? " selected" : ""}>${c === "." ? "default context" : esc(c)}</option>`).join("");
  el.innerHTML = `
  <h1>Subjects <span class="muted count">${names.length}${names.length !== live.length || deleted ? ` of ${(withDeleted || live).length}` : ""}</span></h1>
  <form class="filters" id="filters" role="search">
    <input type="search" name="q" value="${esc(q)}" placeholder="Search subjects (/)" aria-label="Search subjects" autofocus>
    <select name="format" aria-label="Format"><option value="">any format</option>
      ${["AVRO", "PROTOBUF", "JSON"].map((f) => `<option${f === format ? " selected" : ""}>${f}</option>`).join("")}</select>
    <select name="ctx" aria-label="Context"><option value="">any context</option>${ctxOptions}</select>
    <label class="check"><input type="checkbox" name="deleted" value="1"${deleted ? " checked" : ""}> soft-deleted</label>
    <button type="submit">Filter</button>
  </form>
  <div class="table-wrap"><table class="subjects">
    <thead><tr><th>Subject</th><th>Format</th><th>Latest</th><th>Id</th><th>Level</th><th>Mode</th></tr></thead>
    <tbody>${rows.map(({ s, gone, latest, config, mode }) => `
      <tr class="${gone ? "deleted" : ""}" data-subject="${esc(s)}">
        <td><a data-row href="#/subject/${enc(s)}">${esc(s)}</a>${gone ? ' <span class="badge del">deleted</span>' : ""}</td>
        <td>${latest ? `<span class="badge fmt">${esc(latest.schemaType || "AVRO")}</span>` : ""}</td>
        <td>${latest ? "v" + latest.version : "–"}</td>
        <td>${latest ? latest.id : "–"}</td>
        <td>${config ? esc(config.compatibilityLevel || config.compatibility || "") : ""}</td>
        <td>${mode ? esc(mode.mode) : ""}</td>
      </tr>`).join("")}
    </tbody></table></div>
  ${shown.length ? "" : '<p class="muted">No subject matches.</p>'}
  <nav class="pager" aria-label="Pages">
    ${page > 0 ? `<a href="${link({ page: String(page - 1) })}" rel="prev">← Previous</a>` : "<span></span>"}
    <span class="muted">page ${page + 1} of ${pages}</span>
    ${page + 1 < pages ? `<a href="${link({ page: String(page + 1) })}" rel="next">Next →</a>` : "<span></span>"}
  </nav>`;
  const form = el.querySelector("#filters");
  const submit = () => {
    const f = new FormData(form);
    location.hash = link({ q: f.get("q") || "", format: f.get("format") || "", ctx: f.get("ctx") || "", deleted: f.get("deleted") ? "1" : "", page: "0" });
  };
  form.onsubmit = (ev) => { ev.preventDefault(); submit(); };
  form.querySelectorAll("select, input[type=checkbox]").forEach((i) => (i.onchange = submit));
  let timer = null;
  form.querySelector("input[type=search]").oninput = () => { clearTimeout(timer); timer = setTimeout(submit, 350); };
}
