// "Try a change": edit a schema, see at once whether the subject accepts it at its level (the
// registry's verbose compatibility check; reasons mapped to lines where they name a field or a
// path), then register it after a confirmation.

import { api, maybe, enc } from "./api.js";
import { esc, pretty, codeBlock } from "./highlight.js";
import { describeMessage, isContext, reasonList } from "./subject.js";
import { explain, nameAt } from "./fields.js";
import { gate, registerRefusal } from "./access.js";

// the 0-based line each reason is about, when it names a JSON path ('/fields/1') or a 'field'
export function lineOf(message, text) {
  const lines = text.split("\n");
  const path = message.match(/path '([^']*)'/);
  if (path && path[1].startsWith("#/")) {
    const i = protoLine(path[1].slice(2).split("/"), lines);
    if (i >= 0) return i;
  }
  const name = path ? nameAt(path[1], text) : null;
  if (name) {
    const i = lines.findIndex((l) => /"name"\s*:/.test(l) && l.includes(JSON.stringify(name)));
    if (i >= 0) return i;
  }
  for (const m of message.matchAll(/(?:field|Field|property|name) '([A-Za-z_][\w.]*)'/g)) {
    const name = m[1].split(".").pop();
    const i = lines.findIndex((l) => new RegExp(`["\\s]${name}["\\s=:]`).test(l));
    if (i >= 0) return i;
  }
  return -1;
}

// a Protobuf reason's path ('#/Order/Line/2': messages, then a field number or oneof name): the
// line declaring the last element, each searched for after the line of the one before it
function protoLine(segments, lines) {
  let at = -1;
  for (const seg of segments) {
    const word = seg.replace(/[^\w.]/g, "");
    const re = /^\d+$/.test(word)
      ? new RegExp(`=\\s*${word}\\s*[;\\[]`)
      : new RegExp(`\\b(message|enum|oneof|service)\\s+${word}\\b`);
    const next = lines.findIndex((l, i) => i > at && re.test(l.replace(/\/\/.*$/, "")));
    if (next < 0) return at;
    at = next;
  }
  return at;
}

export async function tryView(el, subject, stale) {
  const latest = subject ? await maybe(`subjects/${enc(subject)}/versions/latest`) : null;
  const config = subject ? await maybe(`config/${enc(subject)}`, { query: { defaultToGlobal: "true" } }) : await maybe("config");
  if (stale()) return;
  const type = (latest && latest.schemaType) || "AVRO";
  const start = latest ? pretty(latest.schema, type) : '{\n  "type": "record",\n  "name": "Example",\n  "fields": [\n    {"name": "id", "type": "long"}\n  ]\n}';
  const level = (config && (config.compatibilityLevel || config.compatibility)) || "?";
  el.innerHTML = `
  <h1>${subject ? `Try a change to <a href="#/subject/${enc(subject)}">${esc(subject)}</a>` : "Register a schema"}</h1>
  <p class="muted">${latest ? `Starting from v${latest.version} (id ${latest.id}); level <b>${esc(level)}</b>.` : `Level <b>${esc(level)}</b> (global default for a new subject).`} Checked as you type.</p>
  <form id="editor" class="card form">
    <div class="row">
      <label>Subject <input name="subject" value="${esc(subject || "")}" required ${subject ? "readonly" : "autofocus"} aria-label="Subject"></label>
      <label>Format <select name="schemaType" aria-label="Format">${["AVRO", "PROTOBUF", "JSON"].map((f) => `<option${f === type ? " selected" : ""}>${f}</option>`).join("")}</select></label>
    </div>
    <div class="split">
      <label class="grow">Schema <textarea name="schema" rows="18" spellcheck="false" class="mono" aria-label="Schema" ${subject ? "autofocus" : ""}>${esc(start)}</textarea></label>
      <div class="grow"><span class="label">Reasons on lines</span><div id="preview"></div></div>
    </div>
    <label>References (JSON array) <input name="references" class="mono" value="${esc(JSON.stringify((latest && latest.references) || []))}" aria-label="References"></label>
    <div id="check" class="verdict" role="status" data-verdict="pending">Not checked yet.</div>
    <button type="submit" id="register">Register…</button>
    <p id="write-note" class="muted" data-read-only hidden></p>
    <p id="result" role="status"></p>
  </form>`;
  const form = el.querySelector("#editor");
  const box = el.querySelector("#check");
  const preview = el.querySelector("#preview");
  const body = () => {
    const f = new FormData(form);
    let references = [];
    try { references = JSON.parse(f.get("references") || "[]"); } catch { throw new Error("References are not a JSON array"); }
    return { subject: f.get("subject").trim(), req: { schema: f.get("schema"), schemaType: f.get("schemaType"), references } };
  };
  // the Register button follows what the user may do in the subject named (see access.js)
  const registerButton = el.querySelector("#register");
  let asked, accessSeq = 0;
  const access = async (subj) => {
    if (subj === asked) return;
    asked = subj;
    const mine = ++accessSeq;
    const why = await registerRefusal(subj || null);
    if (mine === accessSeq) gate(registerButton, el.querySelector("#write-note"), why);
  };
  let seq = 0;
  const check = async () => {
    const mine = ++seq;
    let subj, req;
    try { ({ subject: subj, req } = body()); } catch (e) { box.textContent = e.message; return; }
    access(subj);
    if (!subj) { box.textContent = "Name the subject to check against it."; box.dataset.verdict = "pending"; return; }
    box.dataset.verdict = "checking";
    let res;
    try {
      res = await api(`compatibility/subjects/${enc(subj)}/versions`, { method: "POST", query: { verbose: "true" }, body: req });
    } catch (e) {
      res = { error: e.message, code: e.code };
    }
    if (mine !== seq) return;
    const text = req.schema;
    const marks = new Map(), titles = new Map();
    const messages = res.messages || [];
    const reasons = messages.filter((m) => !isContext(m)).map((m) => {
      const words = explain(describeMessage(m), text);
      const line = lineOf(String(m), text);
      if (line >= 0) { marks.set(line, "m-bad"); titles.set(line, words); }
      return { words, line };
    });
    preview.innerHTML = codeBlock(text, req.schemaType, marks, titles);
    if (res.error) {
      box.className = "verdict bad"; box.dataset.verdict = "error";
      box.innerHTML = `Invalid: ${esc(res.error)}${res.code ? ` (error_code ${res.code})` : ""}`;
    } else if (res.is_compatible) {
      box.className = "verdict good"; box.dataset.verdict = "compatible";
      box.innerHTML = `<b>Compatible</b>: ${esc(subj)} would accept it at its level.`;
    } else {
      box.className = "verdict bad"; box.dataset.verdict = "incompatible";
      const lines = new Map(reasons.map((r) => [r.words, r.line]));
      box.innerHTML = `<b>Not compatible</b> at its level:${reasonList(messages, (m) => {
        const words = explain(describeMessage(m), text);
        const line = lines.get(words) ?? -1;
        return `<li>${line >= 0 ? `<span class="badge">line ${line + 1}</span> ` : ""}${esc(words)}</li>`;
      })}`;
    }
  };
  let timer = null;
  form.oninput = () => { clearTimeout(timer); timer = setTimeout(check, 300); };
  form.onchange = form.oninput;
  form.onsubmit = (ev) => {
    ev.preventDefault();
    if (registerButton.disabled) return;
    let subj, req;
    try { ({ subject: subj, req } = body()); } catch (e) { el.querySelector("#result").textContent = e.message; return; }
    confirmRegister(subj, req, box.dataset.verdict, el.querySelector("#result"));
  };
  check();
}

function confirmRegister(subject, req, verdict, out) {
  const modal = document.getElementById("modal");
  modal.innerHTML = `<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="confirm-title">
    <h2 id="confirm-title">Register a new version of ${esc(subject)}?</h2>
    <p>${verdict === "incompatible" ? '<span class="error">The check says it is not compatible: the registry will refuse it.</span>' : "It becomes the subject's latest version for every producer."}</p>
    <div class="row"><button id="confirm-yes">Register</button><button id="confirm-no" class="secondary">Cancel</button></div></div>`;
  modal.hidden = false;
  const close = () => { modal.hidden = true; modal.innerHTML = ""; };
  modal.querySelector("#confirm-no").onclick = close;
  modal.querySelector("#confirm-yes").focus();
  modal.querySelector("#confirm-yes").onclick = async () => {
    close();
    out.className = "";
    out.textContent = "Registering…";
    try {
      const res = await api(`subjects/${enc(subject)}/versions`, { method: "POST", body: req });
      const sv = await api(`subjects/${enc(subject)}/versions/latest`);
      out.className = "good";
      out.dataset.registered = String(res.id);
      out.innerHTML = `Registered: id <b>${res.id}</b>. <a href="#/subject/${enc(subject)}/v/${sv.version}">Open ${esc(subject)} v${sv.version}</a>`;
    } catch (e) {
      out.className = "error";
      out.dataset.refused = String(e.code || e.status);
      out.textContent = `Refused (${e.status}, error_code ${e.code}): ${e.message}`;
    }
  };
}
