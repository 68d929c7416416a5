// A small Markdown renderer that builds DOM nodes from text: fenced and indented code
// blocks, inline code, headings, lists, block quotes, rules, emphasis, strike-through,
// links and bare URLs (http and https only). No HTML in the input is ever interpreted:
// "<script>" comes out as those characters. An unclosed fence (a reply still streaming)
// runs to the end. Linear in the input apart from emphasis look-ahead within one block.

import { el } from "./dom.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const BULLET = /^ {0,3}([-*+])\s+(.*)$/;
const ORDERED = /^ {0,3}(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^ {0,3}>\s?(.*)$/;
const INDENTED = /^( {4}|\t)(.*)$/;
const BLANK = /^\s*$/;
const ESCAPABLE = "\\`*_{}[]()#+-.!~>|";
const LINK = /\[([^\]\n]{0,500})\]\(\s*<?([^()\s<>]{1,2048})>?(?:\s+"[^"\n]{0,300}")?\s*\)/y;
const BARE_URL = /https?:\/\/[^\s<>"'`]+/y;
const MAX_DEPTH = 6;

/** The URL when it is an absolute http(s) URL, else null. */
export function safeUrl(raw) {
  let url;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
}

function link(href, label) {
  return el("a", { href, rel: "noopener noreferrer nofollow", target: "_blank" }, label);
}

function isWord(ch) {
  return ch !== undefined && /[\p{L}\p{N}]/u.test(ch);
}

/** Append the inline Markdown of `text` to `parent`. */
export function renderInline(text, parent, depth = 0) {
  let buf = "";
  const flush = () => {
    if (buf) parent.append(buf);
    buf = "";
  };
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === "\\" && i + 1 < text.length && ESCAPABLE.includes(text[i + 1])) {
      buf += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === "\n") {
      flush();
      parent.append(el("br"));
      i += 1;
      continue;
    }
    if (ch === "`") {
      let run = 1;
      while (text[i + run] === "`") run += 1;
      const fence = "`".repeat(run);
      const end = text.indexOf(fence, i + run);
      if (end > i) {
        flush();
        let code = text.slice(i + run, end);
        if (code.startsWith(" ") && code.endsWith(" ") && code.trim()) code = code.slice(1, -1);
        parent.append(el("code", { text: code }));
        i = end + run;
        continue;
      }
      buf += fence;
      i += run;
      continue;
    }
    if ((ch === "*" || ch === "_" || ch === "~") && depth < MAX_DEPTH) {
      const double = text[i + 1] === ch;
      const marker = double ? ch + ch : ch;
      const opensOk = text[i + marker.length] !== undefined && !/\s/.test(text[i + marker.length]);
      // "_" opens only after a space or an opening bracket (snake_case, a.__b stay text)
      const boundaryOk = ch !== "_" || i === 0 || /[\s([{"'>]/.test(text[i - 1]);
      if (opensOk && boundaryOk && (double || ch !== "~")) {
        let end = text.indexOf(marker, i + marker.length);
        while (end > 0 && (/\s/.test(text[end - 1]) || (ch === "_" && isWord(text[end + marker.length])))) {
          end = text.indexOf(marker, end + 1);
        }
        if (end > i + marker.length) {
          flush();
          const tag = ch === "~" ? "del" : double ? "strong" : "em";
          const node = el(tag);
          renderInline(text.slice(i + marker.length, end), node, depth + 1);
          parent.append(node);
          i = end + marker.length;
          continue;
        }
      }
    }
    if (ch === "[") {
      LINK.lastIndex = i;
      const m = LINK.exec(text);
      if (m) {
        const href = safeUrl(m[2]);
        flush();
        if (href) parent.append(link(href, m[1]));
        else parent.append(`${m[1]} (${m[2]})`);
        i = LINK.lastIndex;
        continue;
      }
    }
    if (ch === "h" && !isWord(text[i - 1])) {
      BARE_URL.lastIndex = i;
      const m = BARE_URL.exec(text);
      if (m) {
        let raw = m[0];
        while (/[.,;:!?)\]]$/.test(raw)) raw = raw.slice(0, -1);
        const href = safeUrl(raw);
        if (href) {
          flush();
          parent.append(link(href, raw));
          i += raw.length;
          continue;
        }
      }
    }
    buf += ch;
    i += 1;
  }
  flush();
  return parent;
}

function heading(level, text) {
  // the page owns h1/h2; a reply's headings start at h3
  return renderInline(text, el(`h${Math.min(6, level + 2)}`));
}

/** The Markdown `text` as a DocumentFragment of inert nodes. */
export function renderMarkdown(text, depth = 0) {
  const out = document.createDocumentFragment();
  const lines = String(text ?? "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  let paragraph = [];
  const endParagraph = () => {
    if (paragraph.length) out.append(renderInline(paragraph.join("\n"), el("p")));
    paragraph = [];
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = FENCE.exec(line))) {
      endParagraph();
      const close = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !new RegExp(`^ {0,3}${close[0]}{${close.length},}\\s*$`).test(lines[i])) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1; // the closing fence (or past the end)
      const code = el("code", { text: body.join("\n") });
      if (m[2]) code.setAttribute("data-lang", m[2].slice(0, 40));
      out.append(el("pre", {}, code));
      continue;
    }
    if (BLANK.test(line)) {
      endParagraph();
      i += 1;
      continue;
    }
    if (!paragraph.length && INDENTED.test(line)) {
      const body = [];
      while (i < lines.length && (INDENTED.test(lines[i]) || BLANK.test(lines[i]))) {
        body.push(lines[i].replace(/^( {4}|\t)/, ""));
        i += 1;
      }
      while (body.length && BLANK.test(body[body.length - 1])) body.pop();
      out.append(el("pre", {}, el("code", { text: body.join("\n") })));
      continue;
    }
    if ((m = HEADING.exec(line))) {
      endParagraph();
      out.append(heading(m[1].length, m[2]));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      endParagraph();
      out.append(el("hr"));
      i += 1;
      continue;
    }
    if (QUOTE.test(line) && depth < MAX_DEPTH) {
      endParagraph();
      const body = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        body.push(m[1]);
        i += 1;
      }
      out.append(el("blockquote", {}, renderMarkdown(body.join("\n"), depth + 1)));
      continue;
    }
    const bullet = BULLET.exec(line);
    const ordered = bullet ? null : ORDERED.exec(line);
    if (bullet || ordered) {
      endParagraph();
      const pattern = bullet ? BULLET : ORDERED;
      const list = bullet ? el("ul") : el("ol");
      if (ordered && ordered[1] !== "1") list.setAttribute("start", String(Number(ordered[1])));
      const items = [];
      while (i < lines.length) {
        const current = lines[i];
        const hit = pattern.exec(current);
        if (hit) items.push([hit[2]]);
        else if (items.length && /^\s+\S/.test(current)) items[items.length - 1].push(current.trim());
        else break;
        i += 1;
      }
      for (const item of items) list.append(renderInline(item.join("\n"), el("li")));
      out.append(list);
      continue;
    }
    paragraph.push(line);
    i += 1;
  }
  endParagraph();
  return out;
}
