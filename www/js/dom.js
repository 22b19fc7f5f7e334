// Small DOM helpers: element builders and the page's error and status lines.

export const $ = (sel) => document.querySelector(sel);

/** An HTML element with attributes (`on*` are listeners, `text` is text) and children. */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const svgNs = "http://www.w3.org/2000/svg";

/** An SVG element with attributes and optional text. */
export function s(tag, attrs = {}, text) {
  const node = document.createElementNS(svgNs, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Replaces a select's options with `values`, keeping the choice if it is still there. */
export function setOptions(select, values) {
  const keep = select.value;
  select.replaceChildren(...values.map((v) => h("option", { value: v }, v)));
  if (values.includes(keep)) select.value = keep;
}

export function showError(message) {
  const box = $("#error");
  box.textContent = message;
  box.hidden = false;
}

export function clearError() {
  $("#error").hidden = true;
  $("#error").textContent = "";
}

export function status(message) {
  $("#status").textContent = message;
}
