// The chat: the owner's conversation with the picked agent, loaded from the server on
// open and then followed live over /ws.
//
// Invariant: an event is applied once and in order. Every event frame carries the
// session's `seq`; the page keeps the last one applied (`lastSeq`) and drops any frame
// numbered at or below it, and after a drop it subscribes again with
// `after_seq = lastSeq`, so the gateway replays exactly what was missed. A replay too old
// for the gateway's buffer (`replay_gap`) reloads the history instead.

import { api, HttpError, RefusedError } from "./api.js";
import { byId, clear, el } from "./dom.js";
import { messageItems, noticeItem, TurnView, userBubble } from "./transcript.js";

const PAGE = 60;
const DECISION_WORDS = { yes: "Approved", no: "Denied", always: "Always approved", timeout: "Timed out", policy: "Decided by policy" };

function clientId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class Chat {
  constructor({ socket, banner }) {
    this.socket = socket;
    this.banner = banner;
    this.list = byId("transcript");
    this.box = byId("message");
    this.picker = byId("agent");
    this.stopButton = byId("stop");
    this.activity = byId("activity");
    this.earlier = byId("earlier");
    this.ownerSessions = {};
    this.agent = null;
    this.sessionId = null;
    this.reset();
    byId("composer").addEventListener("submit", (e) => {
      e.preventDefault();
      this.send();
    });
    this.box.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.send();
      }
    });
    this.stopButton.addEventListener("click", () => this.stop());
    this.picker.addEventListener("change", () => this.choose(this.picker.value));
    this.earlier.addEventListener("click", () => this.loadEarlier());
  }

  reset() {
    this.lastSeq = 0;
    this.firstSeq = null;
    this.known = false;
    this.subscribed = false;
    this.turns = new Map();
    this.approvals = new Map();
    this.generation = (this.generation ?? 0) + 1;
  }

  /** Fill the agent picker from `/api/status` and open the first (or last used) agent. */
  async setup(status) {
    this.ownerSessions = status.owner_sessions ?? {};
    clear(this.picker);
    for (const agent of status.agents) this.picker.append(el("option", { value: agent, text: agent }));
    const saved = sessionStorage.getItem("beamclaw.agent");
    await this.choose(status.agents.includes(saved) ? saved : status.agents[0]);
  }

  async choose(agent) {
    this.agent = agent;
    this.picker.value = agent;
    sessionStorage.setItem("beamclaw.agent", agent);
    this.sessionId = this.ownerSessions[agent];
    this.reset();
    clear(this.list);
    this.setActivity("idle", false);
    await this.loadHistory();
    if (this.socket.ready) this.subscribe();
  }

  setActivity(text, busy) {
    this.activity.textContent = text;
    this.stopButton.disabled = !busy;
  }

  async loadHistory() {
    const generation = this.generation;
    let data;
    try {
      data = await api(`/api/sessions/${encodeURIComponent(this.sessionId)}?limit=${PAGE}`);
    } catch (exc) {
      if (exc instanceof HttpError && exc.status === 404) {
        this.known = false;
        this.earlier.hidden = true;
        return;
      }
      if (!(exc instanceof RefusedError)) this.banner(`Could not load the conversation: ${exc.message}`);
      return;
    }
    if (generation !== this.generation) return;
    this.known = true;
    this.lastSeq = Math.max(this.lastSeq, data.event_seq);
    this.firstSeq = data.messages.length ? data.messages[0].seq : null;
    this.earlier.hidden = !data.has_more;
    clear(this.list).append(...messageItems(data.messages));
    const state = data.session.state;
    const queued = data.session.queued;
    if (state !== "idle" && state !== "error") this.setActivity(queued ? `working, ${queued} queued` : "working", true);
    await this.loadPendingApprovals();
    this.scroll();
  }

  async loadPendingApprovals() {
    try {
      const data = await api(`/api/approvals?session_id=${encodeURIComponent(this.sessionId)}`);
      for (const a of data.approvals) this.approvalCard(a.id, a.tool, a.args);
    } catch {
      // the chat still works; the Approvals view shows them as well
    }
  }

  async loadEarlier() {
    if (this.firstSeq === null) return;
    const data = await api(
      `/api/sessions/${encodeURIComponent(this.sessionId)}?limit=${PAGE}&before_seq=${this.firstSeq}`,
    );
    this.firstSeq = data.messages.length ? data.messages[0].seq : this.firstSeq;
    this.earlier.hidden = !data.has_more;
    this.list.prepend(...messageItems(data.messages));
  }

  /** Reload what the server holds and follow from its event number (after a gap). */
  async resync() {
    this.reset();
    await this.loadHistory();
    if (this.socket.ready) this.subscribe();
  }

  subscribe() {
    if (!this.known || this.subscribed) return;
    const frame = { type: "subscribe", session_id: this.sessionId };
    if (this.lastSeq > 0) frame.after_seq = this.lastSeq;
    this.socket.send(frame);
  }

  /** The socket is (again) authenticated: follow the session from the last event seen. */
  onReady() {
    this.subscribed = false;
    this.subscribe();
  }

  onDisconnected() {
    this.subscribed = false;
  }

  onFrame(frame) {
    if (frame.session_id && frame.session_id !== this.sessionId) return;
    switch (frame.type) {
      case "subscribed":
        this.subscribed = true;
        return;
      case "session":
        this.known = true;
        return;
      case "error":
        this.onError(frame);
        return;
      case "pong":
        return;
      default:
    }
    if (typeof frame.seq === "number") {
      if (frame.seq <= this.lastSeq) return; // already applied (replayed, or seen twice)
      this.lastSeq = frame.seq;
    }
    this.apply(frame);
    if (["turn_done", "turn_error", "cancelled", "dropped"].includes(frame.type) && !this.subscribed) {
      this.subscribe(); // the turn was followed through its own handle; now the session
    }
  }

  onError(frame) {
    if (frame.code === "replay_gap" || frame.code === "future_seq") {
      this.resync();
    } else if (frame.code === "approval_not_pending") {
      const card = this.approvals.get(frame.request_id);
      if (card) card.resolve("No longer pending");
    } else if (frame.code === "unknown_session") {
      this.known = false;
    } else if (frame.code !== "duplicate") {
      this.list.append(noticeItem(`Error: ${frame.message}`, "error"));
      this.scroll();
    }
  }

  turn(turnId) {
    let view = this.turns.get(turnId);
    if (!view) {
      view = new TurnView(turnId);
      this.turns.set(turnId, view);
      this.list.append(view.li);
    }
    return view;
  }

  apply(frame) {
    const id = frame.turn_id;
    switch (frame.type) {
      case "accepted":
        this.turn(id);
        this.setActivity("working", true);
        break;
      case "queued":
        this.setActivity(`queued #${frame.position}`, true);
        this.list.append(noticeItem(`Your message is queued (position ${frame.position}).`, "queue"));
        break;
      case "text":
        this.turn(id).addText(frame.text);
        this.setActivity("answering", true);
        break;
      case "retrying":
        if (frame.discard_partial) this.turn(id).discardText();
        this.setActivity(`retrying (attempt ${frame.attempt})`, true);
        break;
      case "tool_started":
        this.turn(id).startTool(frame.call_id, frame.tool, frame.args);
        this.setActivity(`running ${frame.tool}`, true);
        break;
      case "tool_finished":
        this.turn(id).finishTool(frame.call_id, frame.is_error, frame.preview);
        break;
      case "approval_requested":
        this.approvalCard(frame.request_id, frame.tool, frame.args, this.turn(id));
        this.setActivity(`waiting for approval of ${frame.tool}`, true);
        break;
      case "approval_resolved": {
        const card = this.approvals.get(frame.request_id);
        if (card) card.resolve(DECISION_WORDS[frame.decision] ?? frame.decision);
        break;
      }
      case "compacted":
        this.list.append(noticeItem(`Context compacted (${frame.before_tokens} → ${frame.after_tokens} tokens).`));
        break;
      case "limit_reached":
      case "notice":
        this.list.append(noticeItem(frame.message ?? frame.text));
        break;
      case "turn_done": {
        const usage = frame.usage ?? {};
        const parts = [];
        if (usage.total_tokens) parts.push(`${usage.total_tokens} tokens`);
        if (typeof usage.cost_usd === "number") parts.push(`$${usage.cost_usd.toFixed(4)}`);
        if (frame.model) parts.push(frame.model);
        if (this.turns.has(id) || frame.text) this.turn(id).finish(parts.join(" · "));
        this.setActivity("idle", false);
        break;
      }
      case "turn_error":
        this.turns.get(id)?.finish(null);
        this.list.append(noticeItem(`The turn failed (${frame.kind}): ${frame.message}`, "error"));
        this.setActivity("idle", false);
        break;
      case "cancelled":
        this.turns.get(id)?.finish(null);
        this.list.append(noticeItem(`Stopped${frame.reason ? `: ${frame.reason}` : ""}.`));
        this.setActivity("idle", false);
        break;
      case "dropped":
        this.list.append(noticeItem(`A queued message was dropped${frame.reason ? `: ${frame.reason}` : ""}.`));
        break;
      default:
        return;
    }
    this.scroll();
  }

  /** Approve / Deny / Always for one request: inside its turn's reply when the page
   * follows that turn, else as an item of its own (a request pending when the page opened). */
  approvalCard(requestId, tool, args, turn = null) {
    if (this.approvals.has(requestId)) return;
    const status = el("p", { class: "approval-status", role: "status" });
    const decide = (decision, restDecision) => async () => {
      for (const b of buttons) b.disabled = true;
      status.textContent = "Sending…";
      const frame = { type: "approval", session_id: this.sessionId, request_id: requestId, decision };
      if (this.socket.send(frame)) return;
      try {
        await api(`/api/approvals/${encodeURIComponent(requestId)}`, { method: "POST", body: { decision: restDecision } });
        card.resolve(DECISION_WORDS[decision]);
      } catch (exc) {
        card.resolve(exc instanceof HttpError ? exc.message : "Could not send the answer");
      }
    };
    const buttons = [
      el("button", { type: "button", class: "approve", onclick: decide("yes", "approve") }, "Approve"),
      el("button", { type: "button", class: "deny", onclick: decide("no", "deny") }, "Deny"),
      el("button", { type: "button", onclick: decide("always", "always") }, "Always"),
    ];
    const li = el(
      turn ? "div" : "li",
      { class: turn ? "approval" : "msg approval", role: "group", "aria-label": `Approval needed for ${tool}` },
      el("p", { class: "who", text: `Approve ${tool}?` }),
      el("pre", { class: "tool-args", text: JSON.stringify(args ?? {}, null, 1) }),
      el("div", { class: "buttons" }, buttons),
      status,
    );
    const card = {
      resolve: (text) => {
        for (const b of buttons) b.disabled = true;
        status.textContent = text;
        li.classList.add("resolved");
      },
    };
    this.approvals.set(requestId, card);
    if (turn) turn.addBlock(li);
    else this.list.append(li);
    this.scroll();
    buttons[0].focus({ preventScroll: true });
  }

  send() {
    const text = this.box.value.trim();
    if (!text || !this.agent) return;
    const frame = {
      type: "message",
      id: clientId(),
      text,
      agent: this.agent,
      session_id: this.sessionId,
      approval_mode: "wait",
    };
    if (!this.socket.send(frame)) {
      this.banner("Not connected to the gateway: the message was not sent (it is still in the box).");
      return;
    }
    this.box.value = "";
    this.list.append(userBubble(text));
    this.scroll();
  }

  async stop() {
    try {
      await api("/api/stop", { method: "POST", body: { session_id: this.sessionId } });
    } catch (exc) {
      if (!(exc instanceof RefusedError)) this.banner(`Could not stop: ${exc.message}`);
    }
  }

  scroll() {
    const last = this.list.lastElementChild;
    if (last) last.scrollIntoView({ block: "end" });
  }
}
