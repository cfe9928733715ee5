// What the signed-in user may change, asked of the registry without changing anything, so that
// write controls are shown disabled with the reason instead of ending in a refusal:
// - registering: the subject's mode (or the global one): READONLY and READONLY_OVERRIDE refuse it;
// - the auth rules: a write whose body the registry refuses as invalid (nothing is stored) is
//   answered 403 when the rules do not allow that write, and 422 when they do. The registry's
//   API has no "what may I do" call, so this is the one way a client can ask it.

import { api, maybe, enc, ApiError } from "./api.js";

const READ_ONLY_MODES = new Set(["READONLY", "READONLY_OVERRIDE"]);

async function permitted(path, method, body) {
  try {
    await api(path, { method, body });
    return true;
  } catch (e) {
    return !(e instanceof ApiError && (e.status === 401 || e.status === 403));
  }
}

// null when a schema may be registered under `subject` (no subject: the global mode), else why not
export async function registerRefusal(subject) {
  const mode = subject
    ? await maybe(`mode/${enc(subject)}`, { query: { defaultToGlobal: "true" } })
    : await maybe("mode");
  if (mode && READ_ONLY_MODES.has(mode.mode)) {
    return `${subject ? `subject '${subject}'` : "the registry"} is in ${mode.mode} mode`;
  }
  if (subject && !(await permitted(`subjects/${enc(subject)}/versions`, "POST", { schema: "{" }))) {
    return `your user may not register schemas under '${subject}'`;
  }
  return null;
}

// null when the config and mode of `subject` (no subject: the global ones) may be changed
export async function configRefusal(subject) {
  const path = subject ? `config/${enc(subject)}` : "config";
  if (await permitted(path, "PUT", { compatibility: "-" })) return null;
  return `your user may not change ${subject ? `the config of '${subject}'` : "the global config or mode"}`;
}

// `button` disabled with `why` (null: enabled), the reason also shown in `note`
export function gate(button, note, why) {
  button.disabled = Boolean(why);
  button.title = why ? `Read-only: ${why}` : "";
  note.hidden = !why;
  note.textContent = why ? `Read-only: ${why}.` : "";
}
