// Start-up: take the token (fragment, this tab's storage or the sign-in form), ask the
// gateway for its status, then open the chat and the socket. A refused token stops every
// call and shows the sign-in form with a message; a gateway that is down shows a banner
// and is asked again with backoff.

import { api, captureFragmentToken, RefusedError, setRefusalHandler, token, UnreachableError } from "./api.js";
import { Chat } from "./chat.js";
import { showApprovals, showHealth, showSchedules, showSessions, showTasks, showUsage } from "./control.js";
import { byId } from "./dom.js";
import { GatewaySocket } from "./socket.js";

const VIEWS = {
  chat: null,
  sessions: showSessions,
  health: showHealth,
  approvals: showApprovals,
  usage: showUsage,
  schedules: showSchedules,
  tasks: showTasks,
};

let bootAttempt = 0;
let bootTimer = null;
let started = false;

function banner(text) {
  const node = byId("banner");
  node.textContent = text ?? "";
  node.hidden = !text;
}

function connection(text) {
  byId("connection").textContent = text;
}

const socket = new GatewaySocket({
  onReady: () => {
    banner(null);
    chat.onReady();
  },
  onFrame: (frame) => chat.onFrame(frame),
  onState: (state, delay) => {
    if (state === "connected") connection("Connected");
    else if (state === "connecting") connection("Connecting…");
    else if (state === "reconnecting") {
      chat.onDisconnected();
      connection("Disconnected");
      banner(`Connection to the gateway lost; reconnecting in ${Math.ceil(delay / 1000)} s…`);
    }
  },
});
const chat = new Chat({ socket, banner });

function showView(name) {
  for (const button of byId("nav").querySelectorAll("button")) {
    if (button.dataset.view === name) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
  for (const view of Object.keys(VIEWS)) byId(`view-${view}`).hidden = view !== name;
  VIEWS[name]?.();
  if (name === "chat") byId("message").focus();
}

function showLogin(message) {
  byId("nav").hidden = true;
  for (const view of Object.keys(VIEWS)) byId(`view-${view}`).hidden = true;
  byId("login").hidden = false;
  const note = byId("login-message");
  note.textContent = message ?? "";
  note.hidden = !message;
  byId("token-input").focus();
}

setRefusalHandler(() => {
  const hadToken = Boolean(token.get());
  token.clear();
  socket.stop();
  started = false;
  clearTimeout(bootTimer);
  banner(null);
  connection("Signed out");
  showLogin(hadToken ? "The gateway refused this token. Enter the right one to connect." : "This gateway needs its token.");
});

async function boot() {
  clearTimeout(bootTimer);
  let status;
  try {
    status = await api("/api/status");
  } catch (exc) {
    if (exc instanceof RefusedError) return; // the refusal handler shows the sign-in form
    const delay = Math.min(30000, 1000 * 2 ** bootAttempt);
    bootAttempt = Math.min(bootAttempt + 1, 6);
    const why = exc instanceof UnreachableError ? "The gateway is not reachable" : `The gateway answered: ${exc.message}`;
    banner(`${why}; trying again in ${Math.ceil(delay / 1000)} s…`);
    bootTimer = setTimeout(boot, delay);
    return;
  }
  bootAttempt = 0;
  banner(null);
  byId("login").hidden = true;
  byId("nav").hidden = false;
  showView("chat");
  if (!started) {
    started = true;
    await chat.setup(status);
    socket.start();
  }
}

function wire() {
  for (const button of byId("nav").querySelectorAll("button")) {
    button.addEventListener("click", () => showView(button.dataset.view));
  }
  for (const button of document.querySelectorAll("[data-refresh]")) {
    button.addEventListener("click", () => VIEWS[button.dataset.refresh]?.());
  }
  byId("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = byId("token-input");
    const value = input.value.trim();
    if (!value) return;
    input.value = "";
    token.set(value);
    byId("login-message").hidden = true;
    boot();
  });
}

captureFragmentToken();
wire();
boot();
