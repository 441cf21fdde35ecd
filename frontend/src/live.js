// The live feed: /ws/graph/ with the page's session cookie. Subscribes to each cube shown, with
// `since` = the last event id seen of that cube (the snapshot's last_event_id at first), so that a
// reconnect replays what was missed. Reconnects with a growing delay (0.5 s up to 10 s).

const MAX_DELAY_MS = 10000;

export class LiveFeed {
  constructor({ path, onEvent, onReload, onState, onError }) {
    this.url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    this.onEvent = onEvent;
    this.onReload = onReload;
    this.onState = onState;
    this.onError = onError;
    this.cubes = new Map(); // cube id -> last event id seen
    this.socket = null;
    this.delay = 500;
    this.closed = false;
    this.connects = 0;
  }

  // Follow exactly these cubes from event `since` on (after a snapshot load).
  follow(cubeIds, since) {
    const wanted = new Set(cubeIds);
    for (const cube of [...this.cubes.keys()]) {
      if (!wanted.has(cube)) {
        this.cubes.delete(cube);
        this.send({ type: "unsubscribe", cube });
      }
    }
    for (const cube of wanted) {
      this.cubes.set(cube, since);
      this.send({ type: "subscribe", cube, since });
    }
    if (!this.socket) this.connect();
  }

  seen(cube, id) {
    if (this.cubes.has(cube) && id > this.cubes.get(cube)) this.cubes.set(cube, id);
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  connect() {
    this.onState("connecting");
    const socket = (this.socket = new WebSocket(this.url));
    socket.addEventListener("open", () => {
      this.connects += 1;
      this.delay = 500;
      for (const [cube, since] of this.cubes) this.send({ type: "subscribe", cube, since });
      this.onState("live");
    });
    socket.addEventListener("message", (message) => {
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return;
      }
      if (data.type === "event") {
        if (!this.cubes.has(data.cube)) return;
        this.onEvent(data);
        this.seen(data.cube, data.id);
      } else if (data.type === "reload") {
        this.onReload(data.message);
      } else if (data.type === "error") {
        this.onError(data);
      }
    });
    socket.addEventListener("close", (event) => {
      if (this.socket === socket) this.socket = null;
      if (this.closed) return;
      if (event.code === 4401) {
        this.onState("signed-out");
        return;
      }
      this.onState("reconnecting");
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(MAX_DELAY_MS, this.delay * 2);
    });
  }

  // For tests and the bench: drop the connection as a network failure would (it reconnects).
  drop() {
    if (this.socket) this.socket.close();
  }
}
