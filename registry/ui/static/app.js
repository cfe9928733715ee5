// The router (hash URLs name the view: #/subject/<s>/v/<n>, #/subject/<s>/diff/<a>/<b>, ...),
// sign-in, and keyboard navigation.

import { api, credentials, setCredentials, ApiError } from "./api.js";
import { esc } from "./highlight.js";
import { subjectsView } from "./list.js";
import { subjectView, diffView } from "./subject.js";
import { tryView } from "./editor.js";
import { lookupView, configView, overviewView } from "./admin.js";

const view = document.getElementById("view");

export function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, qs] = raw.split("?");
  const parts = path.split("/").filter((p) => p !== "").map(decodeURIComponent);
  return { parts, query: new URLSearchParams(qs || "") };
}

export function go(hash) { location.hash = hash; }

function loginView(el) {
  const c = credentials();
  el.innerHTML = `<h1>Sign in</h1>
  <p class="muted">Credentials stay in this tab (sessionStorage) and are sent to the registry's API only.</p>
  ${c ? `<p>Signed in as <b>${esc(c.user || "token")}</b>. <button id="signout">Sign out</button></p>` : ""}
  <form id="basic" class="card form">
    <h2>User and password (HTTP Basic)</h2>
    <label>User <input name="user" autocomplete="username" required></label>
    <label>Password <input name="password" type="password" autocomplete="current-password"></label>
    <button type="submit">Sign in</button>
  </form>
  <form id="bearer" class="card form">
    <h2>Bearer token</h2>
    <label>Token <textarea name="token" rows="3" required></textarea></label>
    <button type="submit">Use token</button>
  </form>
  <p id="login-result" role="status"></p>`;
  const done = async () => {
    const out = el.querySelector("#login-result");
    try {
      await api("subjects", { query: { limit: 1 } });
      renderWho();
      go(sessionStorage.getItem("schema-registry-ui-back") || "#/");
    } catch (e) {
      out.textContent = `Refused: ${e.message}`;
      out.className = "error";
    }
  };
  el.querySelector("#basic").onsubmit = (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    setCredentials({ user: f.get("user"), password: f.get("password") });
    done();
  };
  el.querySelector("#bearer").onsubmit = (ev) => {
    ev.preventDefault();
    setCredentials({ token: new FormData(ev.target).get("token").trim() });
    done();
  };
  const out = el.querySelector("#signout");
  if (out) out.onclick = () => { setCredentials(null); renderWho(); route(); };
}

function renderWho() {
  const c = credentials();
  document.getElementById("who").textContent = c ? (c.user || "token") : "Sign in";
}

let generation = 0;

export async function route() {
  const mine = ++generation;
  const { parts, query } = parseHash();
  const name = parts[0] || "subjects";
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === name));
  const el = document.createElement("div");
  el.className = "page";
  el.dataset.view = name;
  const stale = () => mine !== generation;
  try {
    if (name === "login") loginView(el);
    else if (name === "subjects") await subjectsView(el, query, stale);
    else if (name === "subject" && parts[2] === "diff") await diffView(el, parts[1], parts[3], parts[4], stale);
    else if (name === "subject" && parts[2] === "try") await tryView(el, parts[1], stale);
    else if (name === "subject") await subjectView(el, parts[1], parts[2] === "v" ? parts[3] : null, query, stale);
    else if (name === "new") await tryView(el, null, stale);
    else if (name === "lookup") await lookupView(el, query, stale);
    else if (name === "config") await configView(el, stale);
    else if (name === "overview") await overviewView(el, stale);
    else el.innerHTML = `<h1>Not found</h1><p>No view named ${esc(name)}. <a href="#/">Subjects</a></p>`;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      sessionStorage.setItem("schema-registry-ui-back", location.hash || "#/");
      el.innerHTML = `<h1>Sign in needed</h1><p class="error">${esc(e.message)}</p><p><a href="#/login">Sign in</a></p>`;
    } else {
      el.innerHTML = `<h1>Error</h1><p class="error" role="alert">${esc(e.message)}${e.code ? ` (error_code ${e.code})` : ""}</p>`;
    }
  }
  if (stale()) return;
  // what was typed in the search box while this view loaded is kept, not lost
  const active = document.activeElement;
  const typed = active instanceof HTMLInputElement && active.type === "search" && view.contains(active) &&
    active.value !== active.defaultValue ? active.value : null;
  view.replaceChildren(el);
  view.dataset.ready = location.hash || "#/";
  const focus = el.querySelector("[autofocus]");
  if (focus) {
    focus.focus();
    if (focus instanceof HTMLInputElement && focus.type === "search") {
      if (typed !== null && typed !== focus.value) {
        focus.value = typed;
        focus.dispatchEvent(new Event("input"));
      }
      focus.setSelectionRange(focus.value.length, focus.value.length);
    }
  }
}

// keyboard: "/" search, j/k move in lists, Enter opens, [ ] versions, g+letter views, Esc closes
let pendingG = false;
document.addEventListener("keydown", (ev) => {
  const t = ev.target;
  const typing = t instanceof HTMLElement && (t.matches("input, textarea, select") || t.isContentEditable);
  if (ev.key === "Escape") {
    const modal = document.getElementById("modal");
    if (!modal.hidden) { modal.hidden = true; modal.innerHTML = ""; return; }
    if (typing) t.blur();
    return;
  }
  if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (pendingG) {
    pendingG = false;
    const to = { s: "#/", n: "#/new", l: "#/lookup", c: "#/config", o: "#/overview" }[ev.key];
    if (to) { go(to); ev.preventDefault(); }
    return;
  }
  if (ev.key === "g") { pendingG = true; return; }
  if (ev.key === "/") {
    const search = document.querySelector("#view input[type=search]");
    if (search) { search.focus(); ev.preventDefault(); }
    return;
  }
  const rows = [...document.querySelectorAll("#view [data-row]")];
  if (rows.length && ["j", "k", "ArrowDown", "ArrowUp"].includes(ev.key)) {
    const at = rows.indexOf(document.activeElement);
    const next = ev.key === "j" || ev.key === "ArrowDown" ? Math.min(at + 1, rows.length - 1) : Math.max(at - 1, 0);
    rows[next].focus();
    ev.preventDefault();
    return;
  }
  if (ev.key === "[" || ev.key === "]") {
    const link = document.querySelector(ev.key === "[" ? "#view a[data-prev]" : "#view a[data-next]");
    if (link) link.click();
  }
});

window.addEventListener("hashchange", route);
renderWho();
route();
