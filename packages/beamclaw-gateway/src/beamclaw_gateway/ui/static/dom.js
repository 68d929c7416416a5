// Building DOM nodes from data. Text always goes in as text (textContent or Text nodes),
// never as markup; the page's CSP (Trusted Types) makes every HTML string sink throw.

/** el("p", {class: "x", text: "hi", onclick: fn}, child, "text", ...) */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key.startsWith("on")) {
      throw new Error(`refusing a string event handler: ${key}`);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export function byId(id) {
  return document.getElementById(id);
}

/** "3 min ago" style, from epoch seconds. */
export function ago(epochSeconds, now = Date.now() / 1000) {
  const s = Math.max(0, Math.round(now - epochSeconds));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function when(epochSeconds) {
  if (epochSeconds === null || epochSeconds === undefined) return "—";
  const value = typeof epochSeconds === "number" ? epochSeconds * 1000 : Date.parse(epochSeconds);
  return Number.isNaN(value) ? String(epochSeconds) : new Date(value).toLocaleString();
}

export function clip(text, max) {
  const s = String(text ?? "");
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
