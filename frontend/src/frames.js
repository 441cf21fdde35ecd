// Sigma with frames paced to what drawing one really costs.
//
// Sigma redraws the whole graph for every camera change. With a GPU a frame of 10,000 nodes and
// 30,000 edges costs a few milliseconds; with software WebGL (a machine without a GPU, or with its GPU
// blocked: SwiftShader, llvmpipe) the same frame costs most of a second, and panning by redrawing is a
// slide show. So the renderer measures what a frame costs (drawing it and reading one pixel back,
// which waits for the rasteriser) and, when that is over FRAME_BUDGET_MS, it *glides*:
//   - a pan or zoom moves the last frame instead of drawing a new one: the drawing layers get the CSS
//     transform that puts every drawn point where the current camera would draw it (the compositor
//     moves a bitmap, whatever the graph's size), and the graph is drawn for real once the camera has
//     been still for SETTLE_MS;
//   - the frame it draws is whole (edges and labels too, unlike sigma's hide-on-move settings),
//     because that is the frame that will be moved around;
//   - other redraws (the layout, live events, a dragged node) are spaced so that drawing takes at most
//     about half the time, which leaves the CPU to the layout's worker and to input.
// A pointer pressed on the stage first draws any frame still owed, so that what sigma picks under the
// pointer is what the current camera shows. With a fast renderer nothing changes: every camera change
// is drawn, as sigma does.
import Sigma from "sigma";

const FRAME_BUDGET_MS = 40;
const SETTLE_MS = 160;
const MODES = ["auto", "glide", "redraw"];

export class PacedSigma extends Sigma {
  // settleMs: how long the camera stays still before a gliding frame is redrawn (tests lengthen it).
  constructor(graph, container, settings) {
    super(graph, container, settings);
    container.addEventListener("mousedown", () => this.flush(), { capture: true });
    container.addEventListener("touchstart", () => this.flush(), { capture: true, passive: true });
  }

  // "auto" glides when the measured frame cost is over budget; "glide" and "redraw" force a mode.
  setFrameMode(mode) {
    if (!MODES.includes(mode)) throw new Error(`frame mode must be one of ${MODES.join(", ")}`);
    this.frameMode = mode;
    this.flush();
  }

  gliding() {
    const mode = this.frameMode || "auto";
    if (mode !== "auto") return mode === "glide";
    return (this.frameCost || 0) > FRAME_BUDGET_MS;
  }

  // Draw now and wait for the rasteriser: the frame's real cost, kept for the mode and the pacing.
  // Processing the graph's data (after the graph changed) is not part of it: panning does not do it.
  measureFrame() {
    this.processMs = 0;
    const started = performance.now();
    this.render();
    const pixel = new Uint8Array(4);
    for (const gl of Object.values(this.webGLContexts)) gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
    this.frameCost = performance.now() - started - this.processMs;
    return this.frameCost;
  }

  process(...args) {
    const started = performance.now();
    try {
      return super.process(...args);
    } finally {
      this.processMs = (this.processMs || 0) + performance.now() - started;
    }
  }

  // A gliding frame is drawn whole: hiding edges or labels on move would show a pan without them.
  getSetting(key) {
    if ((key === "hideEdgesOnMove" || key === "hideLabelsOnMove") && this.gliding()) return false;
    return super.getSetting(key);
  }

  // Draw any frame still owed (a pan's settle, a paced redraw) at once.
  flush() {
    if (this.settleTimer || this.paceTimer || this.renderFrame || this.frameMoved) this.render();
    return this;
  }

  // Sigma binds this in its constructor: the camera's changes come here instead of straight to a redraw.
  bindCameraHandlers() {
    this.activeListeners.camera = () => this.cameraChanged();
    this.camera.on("updated", this.activeListeners.camera);
    return this;
  }

  cameraChanged() {
    if (!this.drawnCamera || !this.gliding()) {
      this.scheduleRender();
      return;
    }
    this.moveFrame();
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = null;
      this.scheduleRender();
    }, this.settleMs ?? SETTLE_MS);
  }

  // The affine map from where the drawn camera put things to where the current one puts them, from
  // three corners of the viewport (rotation included), as a CSS matrix on every drawing layer. The
  // mouse layer stays put: sigma reads pointer positions from it.
  moveFrame() {
    const { width, height } = this.getDimensions();
    const current = this.camera.getState();
    const move = (x, y) => this.framedGraphToViewport(
      this.viewportToFramedGraph({ x, y }, { cameraState: this.drawnCamera }), { cameraState: current });
    const origin = move(0, 0);
    const right = move(width, 0);
    const down = move(0, height);
    const matrix = [
      (right.x - origin.x) / width, (right.y - origin.y) / width,
      (down.x - origin.x) / height, (down.y - origin.y) / height,
      origin.x, origin.y,
    ];
    if (!matrix.every(Number.isFinite)) return;
    const transform = `matrix(${matrix.join(",")})`;
    for (const [id, canvas] of Object.entries(this.getCanvases())) {
      if (id === "mouse") continue;
      canvas.style.transformOrigin = "0 0";
      canvas.style.transform = transform;
    }
    this.frameMoved = true;
  }

  resetFrame() {
    if (!this.frameMoved) return;
    for (const canvas of Object.values(this.getCanvases())) canvas.style.transform = "";
    this.frameMoved = false;
  }

  scheduleRender() {
    if (this.renderFrame || this.paceTimer) return this;
    const wait = this.gliding() && this.drawnAt !== undefined ? this.drawnAt + 2 * (this.frameCost || 0) - performance.now() : 0;
    if (wait <= 0) return super.scheduleRender();
    this.paceTimer = setTimeout(() => {
      this.paceTimer = null;
      super.scheduleRender();
    }, wait);
    return this;
  }

  render() {
    clearTimeout(this.settleTimer);
    clearTimeout(this.paceTimer);
    this.settleTimer = null;
    this.paceTimer = null;
    this.resetFrame();
    if (!this.gliding()) {
      super.render();
    } else {
      const { hideEdgesOnMove, hideLabelsOnMove } = this.settings;
      this.settings.hideEdgesOnMove = false;
      this.settings.hideLabelsOnMove = false;
      try {
        super.render();
      } finally {
        this.settings.hideEdgesOnMove = hideEdgesOnMove;
        this.settings.hideLabelsOnMove = hideLabelsOnMove;
      }
    }
    this.drawnCamera = this.camera.getState();
    this.drawnAt = performance.now();
    return this;
  }
}
