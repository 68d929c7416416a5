// The control views: sessions (and one session's transcript), health of every component,
// pending approvals, usage and cost per agent and day, schedules, the agents' own tasks
// (TASKS.md). Each loads when shown
// and on its Refresh button; nothing polls in the background.

import { api, HttpError, RefusedError } from "./api.js";
import { ago, byId, clear, clip, el, when } from "./dom.js";
import { messageItems } from "./transcript.js";

function cell(text, props = {}) {
  return el("td", props, text === undefined || text === null ? "—" : String(text));
}

function failure(exc) {
  if (exc instanceof RefusedError) return "The gateway refused the token.";
  return `Could not load: ${exc.message}`;
}

export async function showSessions() {
  const body = byId("sessions-table").tBodies[0];
  let data;
  try {
    data = await api("/api/sessions");
  } catch (exc) {
    clear(body).append(el("tr", {}, el("td", { colspan: 8, text: failure(exc) })));
    return;
  }
  clear(body);
  if (!data.sessions.length) body.append(el("tr", {}, el("td", { colspan: 8, text: "No sessions yet." })));
  for (const s of data.sessions) {
    const open = el("button", { type: "button", class: "link", onclick: () => showTranscript(s.session_id) }, clip(s.session_id, 24));
    open.setAttribute("aria-label", `Show the transcript of ${s.session_id}`);
    body.append(
      el(
        "tr",
        { "data-session": s.session_id },
        el("td", {}, open),
        cell(s.agent_id),
        cell(s.user_id),
        cell(s.channel),
        cell(s.error ? `${s.state} (${s.error})` : s.state),
        cell(s.message_count ?? 0, { class: "num" }),
        cell(s.queued, { class: "num" }),
        el("td", { title: when(s.last_activity_at) }, ago(s.last_activity_at)),
      ),
    );
  }
}

export async function showTranscript(sessionId) {
  const section = byId("session-transcript");
  const list = section.querySelector("ol");
  section.hidden = false;
  byId("session-transcript-title").textContent = `Transcript of ${sessionId}`;
  try {
    const data = await api(`/api/sessions/${encodeURIComponent(sessionId)}?limit=200`);
    clear(list).append(...messageItems(data.messages));
    if (data.has_more) list.prepend(el("li", { class: "msg notice", text: `Showing the last 200 of ${data.total_messages} messages.` }));
  } catch (exc) {
    clear(list).append(el("li", { class: "msg error", text: failure(exc) }));
  }
  section.scrollIntoView({ block: "start" });
}

function describe(data) {
  return Object.entries(data ?? {})
    .filter(([, v]) => v !== null && typeof v !== "object")
    .map(([k, v]) => `${k}: ${v}`)
    .join(" · ");
}

export async function showHealth() {
  const list = byId("health-list");
  const summary = byId("health-summary");
  let data;
  try {
    data = await api("/health");
  } catch (exc) {
    summary.textContent = failure(exc);
    clear(list);
    return;
  }
  summary.textContent = `Overall: ${data.status} · version ${data.version} · up ${Math.round(data.uptime_seconds)} s · ${data.event_loop}`;
  clear(list);
  for (const [name, component] of Object.entries(data.components)) {
    const state = component.status ?? "unknown";
    const item = el(
      "li",
      { class: `card health-${state}`, "data-component": name },
      el("h3", {}, name, " ", el("span", { class: `badge badge-${state}`, text: state })),
    );
    const { status: _status, ...rest } = component;
    const details = describe(rest);
    if (details) item.append(el("p", { class: "meta", text: details }));
    for (const [childName, child] of Object.entries(rest)) {
      if (child && typeof child === "object" && !Array.isArray(child)) {
        const childState = child.status ?? child.run;
        item.append(el("p", { class: "meta", text: `${childName}${childState ? ` (${childState})` : ""} — ${describe(child)}` }));
      }
    }
    list.append(item);
  }
}

export async function showApprovals() {
  const list = byId("approvals-list");
  let data;
  try {
    data = await api("/api/approvals");
  } catch (exc) {
    clear(list).append(el("li", { class: "card", text: failure(exc) }));
    return;
  }
  clear(list);
  if (!data.approvals.length) list.append(el("li", { class: "card", text: "Nothing is waiting for a decision." }));
  for (const a of data.approvals) {
    const status = el("p", { class: "approval-status", role: "status" });
    const answer = (decision) => async () => {
      for (const b of buttons) b.disabled = true;
      try {
        await api(`/api/approvals/${encodeURIComponent(a.id)}`, { method: "POST", body: { decision } });
        status.textContent = { approve: "Approved", deny: "Denied", always: "Always approved" }[decision];
      } catch (exc) {
        status.textContent = exc instanceof HttpError ? exc.message : failure(exc);
      }
    };
    const buttons = [
      el("button", { type: "button", class: "approve", onclick: answer("approve") }, "Approve"),
      el("button", { type: "button", class: "deny", onclick: answer("deny") }, "Deny"),
      el("button", { type: "button", onclick: answer("always") }, "Always"),
    ];
    list.append(
      el(
        "li",
        { class: "card", "data-approval": a.id },
        el("h3", { text: `${a.tool} — agent ${a.agent_id}` }),
        el("p", { class: "meta", text: `session ${a.session_id}` }),
        el("pre", { class: "tool-args", text: JSON.stringify(a.args, null, 1) }),
        el("div", { class: "buttons" }, buttons),
        status,
      ),
    );
  }
}

export async function showUsage() {
  const body = byId("usage-table").tBodies[0];
  let data;
  try {
    data = await api("/api/usage?days=30");
  } catch (exc) {
    clear(body).append(el("tr", {}, el("td", { colspan: 7, text: failure(exc) })));
    return;
  }
  clear(body);
  if (!data.usage.length) body.append(el("tr", {}, el("td", { colspan: 7, text: "No usage recorded in the last 30 days." })));
  for (const d of data.usage) {
    body.append(
      el(
        "tr",
        {},
        cell(d.date),
        cell(d.agent_id),
        cell(d.calls, { class: "num" }),
        cell(d.prompt_tokens, { class: "num" }),
        cell(d.completion_tokens, { class: "num" }),
        cell(d.total_tokens, { class: "num" }),
        cell(d.cost_usd.toFixed(4), { class: "num" }),
      ),
    );
  }
}

export async function showSchedules() {
  const table = byId("schedules-table");
  const note = byId("schedules-note");
  const body = table.tBodies[0];
  let data;
  try {
    data = await api("/api/schedules");
  } catch (exc) {
    table.hidden = true;
    note.textContent = exc instanceof HttpError && (exc.status === 503 || exc.status === 404) ? "The scheduler is not enabled on this gateway." : failure(exc);
    return;
  }
  const schedules = data.schedules ?? [];
  note.textContent = schedules.length ? "" : "No schedules.";
  table.hidden = !schedules.length;
  clear(body);
  for (const s of schedules) {
    const act = (label, method, path) =>
      el(
        "button",
        {
          type: "button",
          onclick: async () => {
            try {
              await api(path, { method });
            } catch (exc) {
              note.textContent = failure(exc);
            }
            await showSchedules();
          },
        },
        label,
      );
    const base = `/api/schedules/${encodeURIComponent(s.id)}`;
    const toggle = s.status === "paused" ? act("Resume", "POST", `${base}/resume`) : act("Pause", "POST", `${base}/pause`);
    body.append(
      el(
        "tr",
        { "data-schedule": s.id },
        cell(clip(s.prompt, 80)),
        cell(s.kind),
        cell(s.status),
        cell(when(s.next_run_at)),
        cell(when(s.last_run_at)),
        cell(`${s.fire_count ?? 0} / ${s.error_count ?? 0}`, { class: "num" }),
        el("td", { class: "buttons" }, toggle, act("Delete", "DELETE", base)),
      ),
    );
  }
}

export async function showTasks() {
  const table = byId("tasks-table");
  const note = byId("tasks-note");
  const body = table.tBodies[0];
  let data;
  try {
    data = await api("/api/tasks");
  } catch (exc) {
    table.hidden = true;
    note.textContent = failure(exc);
    return;
  }
  const tasks = [...(data.tasks ?? [])].sort((a, b) => Number(a.done) - Number(b.done));
  note.textContent = tasks.length ? "" : "No tasks: an agent keeps its own list in TASKS.md.";
  table.hidden = !tasks.length;
  clear(body);
  for (const t of tasks) {
    body.append(
      el(
        "tr",
        { "data-task": `${t.agent_id}:${t.line}` },
        cell(clip(t.text, 120)),
        cell(t.agent_id),
        cell(t.done ? "done" : "open"),
        cell(t.schedule_id),
      ),
    );
  }
}
