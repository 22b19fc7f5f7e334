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

/**
 * Marks every `.scroll` box under `root` whose table is wider than the box:
 * a line above it says there are more columns, and shadows at the edges
 * show which way they are (js toggles `at-start`/`at-end` as it scrolls).
 */
export function markScrollers(root = document) {
  for (const box of root.querySelectorAll(".scroll")) {
    const over = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("overflowing", over);
    let hint = box.previousElementSibling?.classList.contains("scroll-hint") ? box.previousElementSibling : null;
    if (over && !hint) {
      hint = h(
        "p",
        { class: "scroll-hint", "data-testid": "scroll-hint" },
        "More columns to the right: scroll the table sideways ⇆",
      );
      box.before(hint);
    } else if (!over && hint) {
      hint.remove();
    }
    const edges = () => {
      box.classList.toggle("at-start", box.scrollLeft <= 1);
      box.classList.toggle("at-end", box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
    };
    box.onscroll = edges;
    edges();
  }
}
