// The page's address carries the whole scenario (#s=base64url(JSON)), so a
// view is shared by copying the link.

function toBase64Url(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "===".slice((b64.length + 3) % 4));
  return new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}

/** Puts `scenario` in the address without adding a history entry. */
export function writeUrl(scenario) {
  const url = `${location.pathname}#s=${toBase64Url(JSON.stringify(scenario))}`;
  history.replaceState(null, "", url);
}

/** What the address asks for: `{scenario}`, `{preset}`, `{error}` or nothing. */
export function readUrl() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.has("s")) {
    try {
      return { scenario: JSON.parse(fromBase64Url(params.get("s"))) };
    } catch (e) {
      return { error: `The shared link's scenario could not be read (${e.message}); showing a preset instead.` };
    }
  }
  if (params.has("preset")) return { preset: params.get("preset") };
  return {};
}
