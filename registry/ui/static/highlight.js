// Pretty-printing and syntax highlighting of Avro / JSON Schema (JSON) and Protobuf text.

export function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function pretty(text, type) {
  if ((type || "AVRO") === "PROTOBUF") return String(text).trim();
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return String(text); }
}

const JSON_TOKEN = /("(?:\\.|[^"\\])*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|\b(true|false|null)\b/g;

function jsonLine(line) {
  let out = "", last = 0;
  for (const m of line.matchAll(JSON_TOKEN)) {
    out += esc(line.slice(last, m.index));
    if (m[1]) out += m[2] ? `<span class="t-key">${esc(m[1])}</span>${esc(m[2])}` : `<span class="t-str">${esc(m[1])}</span>`;
    else if (m[3]) out += `<span class="t-num">${m[3]}</span>`;
    else out += `<span class="t-lit">${m[4]}</span>`;
    last = m.index + m[0].length;
  }
  return out + esc(line.slice(last));
}

const PROTO_KEYWORDS = new Set(("syntax package import option message enum service rpc returns oneof map repeated optional " +
  "required reserved extend extensions to max stream public weak edition").split(" "));
const PROTO_TYPES = new Set(("double float int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 bool string bytes").split(" "));
const PROTO_TOKEN = /(\/\/.*$)|("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')|\b(\d+)\b|\b([A-Za-z_][\w.]*)\b/g;

function protoLine(line) {
  let out = "", last = 0;
  for (const m of line.matchAll(PROTO_TOKEN)) {
    out += esc(line.slice(last, m.index));
    if (m[1]) out += `<span class="t-com">${esc(m[1])}</span>`;
    else if (m[2]) out += `<span class="t-str">${esc(m[2])}</span>`;
    else if (m[3]) out += `<span class="t-num">${m[3]}</span>`;
    else if (PROTO_KEYWORDS.has(m[4])) out += `<span class="t-kw">${m[4]}</span>`;
    else if (PROTO_TYPES.has(m[4])) out += `<span class="t-type">${m[4]}</span>`;
    else out += esc(m[4]);
    last = m.index + m[0].length;
  }
  return out + esc(line.slice(last));
}

// one highlighted HTML string per line
export function highlightLines(text, type) {
  const f = (type || "AVRO") === "PROTOBUF" ? protoLine : jsonLine;
  return String(text).split("\n").map(f);
}

// a <pre> with line numbers; marks: Map(lineIndex -> css class), titles: Map(lineIndex -> text)
export function codeBlock(text, type, marks = new Map(), titles = new Map()) {
  const lines = highlightLines(text, type);
  const rows = lines.map((html, i) => {
    const cls = marks.get(i) ? ` ${marks.get(i)}` : "";
    const title = titles.get(i) ? ` title="${esc(titles.get(i))}"` : "";
    return `<span class="ln${cls}" data-line="${i + 1}"${title}><span class="no">${i + 1}</span>${html || " "}</span>`;
  });
  return `<pre class="code">${rows.join("")}</pre>`;
}
