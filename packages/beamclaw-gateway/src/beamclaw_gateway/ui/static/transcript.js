// Drawing a conversation: user messages as plain text, the agent's replies as inert
// Markdown (re-rendered while they stream, throttled on long replies so the page stays
// responsive), tool steps and their results as text. Shared by the chat and the
// session transcript view.

import { clip, el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const PREVIEW = 600;

export function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p.type === "text" ? p.text : "[image]")).join("\n");
}

export function userBubble(text) {
  return el("li", { class: "msg user" }, el("p", { class: "who", text: "You" }), el("div", { class: "plain", text }));
}

export function noticeItem(text, kind = "notice") {
  return el("li", { class: `msg ${kind}` }, el("div", { class: "plain", text }));
}

function argsText(args) {
  if (typeof args === "string") return args;
  try {
    return JSON.stringify(args ?? {}, null, 1);
  } catch {
    return String(args);
  }
}

/** One reply of the agent: text segments with tool steps between them. */
export class TurnView {
  constructor(turnId = null) {
    this.turnId = turnId;
    this.li = el("li", { class: "msg assistant", "aria-busy": "true" }, el("p", { class: "who", text: "Agent" }));
    this.segment = null;
    this.tools = new Map();
    this.timer = null;
    this.done = false;
  }

  addText(delta) {
    if (!delta) return;
    if (!this.segment) {
      this.segment = { node: el("div", { class: "md" }), text: "" };
      this.li.append(this.segment.node);
    }
    this.segment.text += delta;
    this.schedule();
  }

  /** Forget the current segment's text (a retried LLM call streams it again). */
  discardText() {
    if (!this.segment) return;
    this.segment.text = "";
    this.schedule();
  }

  schedule() {
    if (this.timer !== null) return;
    const size = this.segment ? this.segment.text.length : 0;
    const delay = size < 16000 ? 0 : Math.min(250, size / 1000);
    this.timer = setTimeout(() => this.render(), delay);
  }

  render() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.segment) this.segment.node.replaceChildren(renderMarkdown(this.segment.text));
  }

  /** A block of its own after what was said so far (an approval card); text after it
   * starts a new segment. */
  addBlock(node) {
    this.render();
    this.segment = null;
    this.li.append(node);
  }

  startTool(callId, tool, args) {
    this.render();
    this.segment = null;
    const status = el("span", { class: "tool-status", text: "running…" });
    const line = el(
      "div",
      { class: "tool" },
      el("span", { class: "tool-name", text: `⚙ ${tool}` }),
      " ",
      status,
      el("pre", { class: "tool-args", text: clip(argsText(args), PREVIEW) }),
    );
    this.li.append(line);
    this.tools.set(callId, { line, status });
    return line;
  }

  finishTool(callId, isError, preview) {
    const entry = this.tools.get(callId);
    if (!entry) return;
    entry.status.textContent = isError ? "✗ failed" : "✓ done";
    entry.line.classList.add(isError ? "tool-error" : "tool-ok");
    if (preview) entry.line.append(el("pre", { class: "tool-result", text: clip(preview, PREVIEW) }));
  }

  finish(footer) {
    this.render();
    this.done = true;
    this.li.setAttribute("aria-busy", "false");
    if (footer) this.li.append(el("p", { class: "meta", text: footer }));
  }
}

/** Stored messages (the REST shape) as list items. */
export function messageItems(messages) {
  const items = [];
  let turn = null;
  for (const m of messages) {
    if (m.role === "user") {
      items.push(userBubble(textOf(m.content)));
      turn = null;
    } else if (m.role === "assistant") {
      if (!turn) {
        turn = new TurnView();
        items.push(turn.li);
      }
      turn.addText(textOf(m.content));
      for (const call of m.tool_calls ?? []) {
        turn.startTool(call.id, call.function.name, call.function.arguments);
      }
      turn.finish(null);
    } else if (m.role === "tool" && turn) {
      turn.finishTool(m.tool_call_id, false, textOf(m.content));
    }
  }
  return items;
}
