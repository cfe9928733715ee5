// Field-level views of a schema per format and the field-level diff of two versions.
// A field is {path, type, def} (def: the default as JSON text, or undefined);
// `line` is the (0-based) line of the pretty-printed text where it is declared.

import { pretty } from "./highlight.js";

function avroType(t) {
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return "union[" + t.map(avroType).join(", ") + "]";
  if (t && typeof t === "object") {
    if (t.logicalType) return `${t.type}(${t.logicalType})`;
    if (t.type === "array") return `array<${avroType(t.items)}>`;
    if (t.type === "map") return `map<${avroType(t.values)}>`;
    if (t.type === "enum") return `enum ${t.name}{${(t.symbols || []).join(",")}}`;
    if (t.type === "fixed") return `fixed ${t.name}(${t.size})`;
    if (t.type === "record" || t.type === "error") return `record ${t.name}`;
    return avroType(t.type);
  }
  return String(t);
}

function avroFields(schema, prefix, out) {
  const visit = (t, p) => {
    if (Array.isArray(t)) t.forEach((b) => visit(b, p));
    else if (t && typeof t === "object") {
      if (t.type === "record" || t.type === "error") avroFields(t, p, out);
      else if (t.type === "array") visit(t.items, p + "[]");
      else if (t.type === "map") visit(t.values, p + "{}");
      else if (typeof t.type === "object") visit(t.type, p);
    }
  };
  if (!schema || typeof schema !== "object") return;
  if (Array.isArray(schema)) { schema.forEach((s) => avroFields(s, prefix, out)); return; }
  if (schema.type !== "record" && schema.type !== "error") { visit(schema, prefix); return; }
  for (const f of schema.fields || []) {
    const path = prefix ? `${prefix}.${f.name}` : f.name;
    out.push({ path, name: f.name, type: avroType(f.type), def: "default" in f ? JSON.stringify(f.default) : undefined });
    visit(f.type, path);
  }
}

function jsonType(s) {
  if (s === true) return "any";
  if (s === false) return "nothing";
  if (!s || typeof s !== "object") return String(s);
  if (s.$ref) return `$ref ${s.$ref}`;
  if (s.enum) return `enum ${JSON.stringify(s.enum)}`;
  if (s.const !== undefined) return `const ${JSON.stringify(s.const)}`;
  let t = Array.isArray(s.type) ? s.type.join("|") : s.type || (s.properties ? "object" : "any");
  if (t === "array" && s.items) t = `array<${jsonType(s.items)}>`;
  if (s.format) t += `(${s.format})`;
  for (const k of ["oneOf", "anyOf", "allOf"]) if (s[k]) t += ` ${k}[${s[k].map(jsonType).join(", ")}]`;
  return t;
}

function jsonFields(s, prefix, out) {
  if (!s || typeof s !== "object") return;
  const required = new Set(s.required || []);
  for (const [name, p] of Object.entries(s.properties || {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const def = p && typeof p === "object" && "default" in p ? JSON.stringify(p.default) : undefined;
    out.push({ path, name, type: jsonType(p) + (required.has(name) ? " (required)" : ""), def });
    jsonFields(p, path, out);
    if (p && p.items) jsonFields(p.items, path + "[]", out);
  }
  for (const key of ["definitions", "$defs"]) {
    for (const [name, d] of Object.entries(s[key] || {})) jsonFields(d, `#${name}`, out);
  }
}

const PROTO_FIELD = /^\s*(?:(repeated|optional|required)\s+)?(map\s*<[^>]+>|[A-Za-z_.][\w.]*)\s+([A-Za-z_]\w*)\s*=\s*(\d+)\s*(\[[^\]]*\])?\s*;/;

function protoFields(text, out) {
  const stack = [];
  const lines = String(text).split("\n");
  lines.forEach((raw, i) => {
    const line = raw.replace(/\/\/.*$/, "");
    const open = line.match(/^\s*(message|enum|oneof)\s+(\w+)\s*\{/);
    if (open) { stack.push(open[1] === "oneof" ? null : open[2]); return; }
    const f = line.match(PROTO_FIELD);
    if (f && stack.length && !/^\s*(option|reserved|extensions)\b/.test(line)) {
      const scope = stack.filter(Boolean).join(".");
      const label = f[1] ? f[1] + " " : "";
      const dm = f[5] && f[5].match(/default\s*=\s*([^,\]]+)/);
      out.push({ path: `${scope}.${f[3]}`, name: f[3], type: `${label}${f[2].replace(/\s+/g, "")} = ${f[4]}`, def: dm ? dm[1].trim() : undefined, line: i });
    } else {
      const e = line.match(/^\s*([A-Z_][A-Z0-9_]*)\s*=\s*(-?\d+)\s*;/);
      if (e && stack.length) out.push({ path: `${stack.filter(Boolean).join(".")}.${e[1]}`, name: e[1], type: `enum value ${e[2]}`, line: i });
    }
    for (const c of line.replace(/"[^"]*"/g, "")) if (c === "}") stack.pop();
  });
}

// the line where each JSON field is declared: the n-th `"name": "<field>"` (Avro) or
// `"<field>": {` (JSON Schema) key in order of appearance
function locateJson(fields, text, type) {
  const lines = text.split("\n");
  let from = 0;
  for (const f of fields) {
    const needle = type === "JSON" ? `"${f.name}":` : `"name": ${JSON.stringify(f.name)}`;
    let found = -1;
    for (let i = from; i < lines.length && found < 0; i++) if (lines[i].includes(needle)) found = i;
    if (found < 0) for (let i = 0; i < lines.length && found < 0; i++) if (lines[i].includes(needle)) found = i;
    if (found >= 0) { f.line = found; from = found + 1; }
  }
}

// fields of `text` (a schema of `type`) with the lines of its pretty-printed form
export function fieldsOf(text, type) {
  type = type || "AVRO";
  const shown = pretty(text, type);
  const out = [];
  if (type === "PROTOBUF") protoFields(shown, out);
  else {
    let parsed;
    try { parsed = JSON.parse(text); } catch { return { text: shown, fields: [] }; }
    if (type === "JSON") jsonFields(parsed, "", out); else avroFields(parsed, "", out);
    locateJson(out, shown, type);
  }
  return { text: shown, fields: out };
}

// [{path, change: added|removed|type|default|same, before, after}]
export function diffFields(a, b) {
  const left = new Map(a.map((f) => [f.path, f]));
  const right = new Map(b.map((f) => [f.path, f]));
  const rows = [];
  for (const f of a) {
    const g = right.get(f.path);
    if (!g) rows.push({ path: f.path, change: "removed", before: f });
    else if (g.type !== f.type) rows.push({ path: f.path, change: "type", before: f, after: g });
    else if (g.def !== f.def) rows.push({ path: f.path, change: "default", before: f, after: g });
    else rows.push({ path: f.path, change: "same", before: f, after: g });
  }
  for (const g of b) if (!left.has(g.path)) rows.push({ path: g.path, change: "added", after: g });
  return rows;
}

// the name of the innermost named object (an Avro field or type) on the JSON pointer `path`
// into the schema `text`, e.g. '/fields/3/type' -> the fourth field's name
export function nameAt(path, text) {
  let node;
  try { node = JSON.parse(text); } catch { return null; }
  let name = null;
  for (const raw of path.split("/").filter(Boolean)) {
    if (node === null || typeof node !== "object") break;
    node = node[decodeURIComponent(raw.replace(/~1/g, "/").replace(/~0/g, "~"))];
    if (node && typeof node === "object" && !Array.isArray(node) && typeof node.name === "string") name = node.name;
  }
  return name;
}

// a verbose reason naming a path, with the field it is about (from the new schema's text)
export function explain(words, text) {
  const path = words.match(/path '([^']*)'/);
  const name = path ? nameAt(path[1], text) : null;
  return name && !words.includes(`'${name}'`) ? `${words} (field '${name}')` : words;
}
