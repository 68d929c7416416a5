// The /ws connection: authenticates with its first frame, reconnects with exponential
// backoff (and jitter) after a drop, and never reconnects after the token was refused.

import { refuse, token } from "./api.js";

const CLOSE_UNAUTHORIZED = 4401;

export class GatewaySocket {
  /**
   * onReady(): authenticated (again); onFrame(frame): every other frame;
   * onState(state, detail): "connecting" | "connected" | "reconnecting" (detail: ms) | "refused".
   */
  constructor({ onReady, onFrame, onState }) {
    this.onReady = onReady;
    this.onFrame = onFrame;
    this.onState = onState;
    this.ws = null;
    this.ready = false;
    this.stopped = false;
    this.attempt = 0;
    this.timer = null;
  }

  get url() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}/ws`;
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  connect() {
    clearTimeout(this.timer);
    this.onState("connecting");
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.ready = false;
    ws.addEventListener("open", () => {
      const secret = token.get();
      if (secret) ws.send(JSON.stringify({ type: "auth", token: secret }));
    });
    ws.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame.type === "authenticated") {
        if (this.ready) return;
        this.ready = true;
        this.attempt = 0;
        this.onState("connected");
        this.onReady();
      } else if (frame.type === "error" && frame.code === "unauthorized") {
        this.refused();
      } else {
        this.onFrame(frame);
      }
    });
    ws.addEventListener("close", (event) => {
      if (this.ws !== ws) return;
      this.ready = false;
      this.ws = null;
      if (event.code === CLOSE_UNAUTHORIZED) this.refused();
      if (this.stopped) return;
      const delay = Math.min(30000, 500 * 2 ** this.attempt) * (0.8 + Math.random() * 0.4);
      this.attempt = Math.min(this.attempt + 1, 8);
      this.onState("reconnecting", delay);
      this.timer = setTimeout(() => this.connect(), delay);
    });
  }

  refused() {
    this.stop();
    this.onState("refused");
    refuse();
  }

  /** Send a frame when connected; false otherwise (the caller says so). */
  send(frame) {
    if (!this.ws || !this.ready) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  /** Reconnect now (after a refusal was cleared by a new sign-in, or on demand). */
  retryNow() {
    if (this.stopped || this.ws) return;
    this.attempt = 0;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    this.ws = null;
    this.ready = false;
    if (ws) ws.close(1000, "bye");
  }
}
