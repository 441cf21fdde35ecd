"""The graph page under load: frames per second while panning and zooming a 10k-node / 30k-edge graph
in headless Chromium, and the time from a REST store call to the node appearing on the open page.

    .venv/bin/python bench/graph_fps.py                        # seeds engram_bench_graph once, then measures
    .venv/bin/python bench/graph_fps.py --stores 20 --seconds 5

The graph is seeded straight into a database of its own (Memory and MemoryLink rows by bulk_create, no
embeddings: the page draws rows, it never reads vectors). A uvicorn server with the benchmark settings
serves the page (static files collected, as `manage.py serve` does); Chromium is Debian's, headless,
with --disable-gpu, so WebGL runs on SwiftShader (software rendering on the CPU): a machine with a GPU
draws faster. FPS: after the layout has settled, a requestAnimationFrame loop in the page moves the
camera (pan on a circle and zoom in and out) on every frame for --seconds, and counts its callbacks.
Then the same with the mouse: Playwright drags the stage in circles for --seconds while the page
counts requestAnimationFrame callbacks. Both run twice: in the page's own frame mode ("auto": it
measured a frame's cost at load and, over 40 ms, pans by moving the last frame and redraws when the
camera stops, see frontend/src/frames.js) and forced to "redraw" (sigma draws every camera change;
edges hidden while the mouse pans a graph of more than 10,000 edges). "settle" is the time from the
last camera change to the whole graph redrawn at the new camera (the redraw waited for with a pixel
read). Store-to-page: POST /api/v1/memories/ with a bearer token, then
the page records Date.now() when the live event adds the node (window.engramGraph.added); the figure
is that minus the wall clock just before the POST (the POST includes embedding the memory).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_user, load_average, machine, percentiles, setup_django, write_json  # noqa: E402

GRAPH_USER = "bench-graph"
PASSWORD = "bench-graph-password-not-secret"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SECTORS = ["episodic", "semantic", "procedural", "emotional", "reflective"]
LINK_TYPES = ["semantic", "causal", "temporal", "analogical", "hierarchical"]
WORDS = ("deploy cache invoice garden tomato release budget server backup meeting travel recipe client "
         "contract design review sprint ticket customer schedule report tax school family concert").split()


def seed_graph(user, *, nodes: int, edges: int, seed: int = 7):
    """``nodes`` memories in clusters and ``edges`` links, mostly inside a cluster (so the layout has
    structure to find), in the user's personal cube. Skipped when the cube already holds enough."""
    from django.db import transaction

    from apps.cubes.services import cube_ensure_personal
    from apps.memories.models import Memory, MemoryLink

    cube = cube_ensure_personal(actor=user)
    have = Memory.objects.filter(cube=cube, deleted_at__isnull=True).count()
    if have >= nodes:
        return cube, have, MemoryLink.objects.filter(source__cube=cube).count()
    rng = random.Random(seed)
    started = time.perf_counter()
    with transaction.atomic():
        Memory.objects.filter(cube=cube).delete()
        memories = [
            Memory(cube=cube, owner=user, primary_sector=rng.choice(SECTORS),
                   content=f"Memory {index}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18))),
                   importance=round(rng.random(), 3), salience=round(rng.random(), 3),
                   strength=round(rng.uniform(0.2, 1.0), 3))
            for index in range(nodes)
        ]
        Memory.objects.bulk_create(memories, batch_size=2000)
        ids = [memory.pk for memory in memories]
        cluster = 60
        pairs = set()
        while len(pairs) < edges:
            a = rng.randrange(nodes)
            if rng.random() < 0.9:
                base = a - a % cluster
                b = base + rng.randrange(min(cluster, nodes - base))
            else:
                b = rng.randrange(nodes)
            if a != b:
                pairs.add((a, b))
        MemoryLink.objects.bulk_create(
            [MemoryLink(source_id=ids[a], target_id=ids[b], link_type=rng.choice(LINK_TYPES),
                        weight=round(rng.uniform(0.3, 1.0), 3)) for a, b in pairs],
            batch_size=5000, ignore_conflicts=True,
        )
    print(f"seeded {nodes} memories and {len(pairs)} links in {time.perf_counter() - started:.1f} s")
    return cube, nodes, len(pairs)


# Milliseconds from `since` to the end of the next redraw, the rasteriser waited for (readPixels).
SETTLED = """function settled(renderer, since) {
  return new Promise((done) => {
    const finish = () => {
      const pixel = new Uint8Array(4);
      for (const gl of Object.values(renderer.webGLContexts)) gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
      done(performance.now() - since);
    };
    if (!renderer.settleTimer && !renderer.paceTimer && !renderer.renderFrame) { finish(); return; }
    renderer.once("afterRender", finish);
  });
}"""


FPS_SCRIPT = """async (seconds) => {
  """ + SETTLED + """
  const app = window.engramGraph;
  const camera = app.renderer.getCamera();
  const start = performance.now();
  let frames = 0;
  const gaps = [];
  let last = start;
  await new Promise((done) => {
    const step = (now) => {
      frames += 1;
      gaps.push(now - last);
      last = now;
      const t = (now - start) / 1000;
      camera.setState({ x: 0.5 + 0.25 * Math.cos(t * 1.3), y: 0.5 + 0.25 * Math.sin(t * 1.3),
                        ratio: 0.55 + 0.4 * Math.sin(t * 0.9), angle: 0 });
      if (now - start < seconds * 1000) requestAnimationFrame(step);
      else done();
    };
    requestAnimationFrame(step);
  });
  const ms = performance.now() - start;
  const settle = await settled(app.renderer, start + ms);
  gaps.shift();
  gaps.sort((a, b) => a - b);
  return { frames, ms, p95_frame_ms: gaps[Math.floor(gaps.length * 0.95)], settle_ms: settle };
}"""


COUNT_FRAMES = """() => { window.__frames = 0; window.__counting = true;
  const step = () => { window.__frames += 1; if (window.__counting) requestAnimationFrame(step); };
  requestAnimationFrame(step); }"""


def mouse_drag_fps(page, seconds: float) -> dict:
    import math

    # Grab the stage near its corner, inside the 40 px padding that sigma keeps free of nodes (a
    # press on a node would drag the node instead).
    box = page.locator("#graph-canvas").bounding_box()
    x0, y0 = box["x"] + 12, box["y"] + 12
    cx, cy = x0 + 130, y0 + 90
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.evaluate(COUNT_FRAMES)
    started = time.perf_counter()
    moves = 0
    while time.perf_counter() - started < seconds:
        angle = moves * 0.15
        page.mouse.move(cx + 110 * math.cos(angle), cy + 75 * math.sin(angle))
        moves += 1
    frames = page.evaluate("window.__counting = false, window.__frames")
    elapsed = time.perf_counter() - started
    page.mouse.up()
    dragged = page.evaluate("window.engramGraph.dragMoved")
    assert not dragged, "the press landed on a node: the bench dragged a node, not the stage"
    return {"fps": round(frames / elapsed, 1), "mouse_moves": moves}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="engram_bench_graph")
    parser.add_argument("--nodes", type=int, default=10000)
    parser.add_argument("--edges", type=int, default=30000)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--stores", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--screenshot", type=Path, help="save the page once the layout has settled (PNG)")
    args = parser.parse_args()

    setup_django(args.db)
    from django.core.management import call_command
    from playwright.sync_api import sync_playwright

    from apps.accounts.services import token_create
    from apps.memories.models import Memory
    from bench.perf import rest_server

    user = bench_user(GRAPH_USER)
    user.set_password(PASSWORD)
    user.save()
    cube, nodes, edges = seed_graph(user, nodes=args.nodes, edges=args.edges)
    # Stores of earlier runs stay in the cube: the page shows the newest --nodes of them.
    total = Memory.objects.filter(cube=cube, deleted_at__isnull=True).count()
    call_command("collectstatic", interactive=False, verbosity=0)
    token = token_create(actor=user, name="bench-graph", scopes=["read", "write"]).raw
    figures = {"machine": machine(), "nodes": nodes, "edges": edges}
    with rest_server(args.db, token, timeout=120) as client:
        base = str(client.base_url).rstrip("/")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{base}/login/?next=/graph/%3Fcube%3D{cube.pk}%26limit%3D{args.nodes}")
            page.fill("#id_username", GRAPH_USER)
            page.fill("#id_password", PASSWORD)
            opened = time.perf_counter()
            page.click("button[type=submit]")
            page.wait_for_function(f"window.engramGraph && window.engramGraph.graph.order === {min(args.nodes, total)}",
                                   timeout=120000)
            loaded = time.perf_counter() - opened
            shown = page.evaluate("({nodes: window.engramGraph.graph.order, edges: window.engramGraph.graph.size})")
            page.wait_for_function("!window.engramGraph.layout.running()", timeout=120000, polling=500)
            settled = time.perf_counter() - opened
            if args.screenshot:
                page.evaluate("window.engramGraph.renderer.flush()")
                page.screenshot(path=str(args.screenshot))
            figures.update(shown=shown, load_s=round(loaded, 1), layout_settled_s=round(settled, 1),
                           frame_cost_ms=round(page.evaluate("window.engramGraph.frameCost")),
                           frame_mode=page.evaluate("document.getElementById('graph-canvas').dataset.frames"))
            for mode in ("auto", "redraw"):
                page.evaluate("mode => window.engramGraph.renderer.setFrameMode(mode)", mode)
                fps = page.evaluate(FPS_SCRIPT, args.seconds)
                figures[f"pan_zoom_{mode}"] = {
                    "fps": round(fps["frames"] / (fps["ms"] / 1000), 1), "p95_frame_ms": round(fps["p95_frame_ms"], 1),
                    "frames": fps["frames"], "settle_ms": round(fps["settle_ms"])}
                # The same by hand: the mouse drags the stage in circles.
                figures[f"mouse_drag_{mode}"] = mouse_drag_fps(page, args.seconds)
            page.evaluate("window.engramGraph.renderer.setFrameMode('auto')")
            idle = page.evaluate(FPS_SCRIPT.replace("camera.setState", "(() => {})"), 2)
            figures["idle_fps"] = round(idle["frames"] / (idle["ms"] / 1000), 1)

            page.wait_for_function("window.engramGraph.live.connects >= 1", timeout=30000)
            latencies, posts = [], []
            for index in range(args.stores + 2):
                before = time.time() * 1000
                response = client.post("/api/v1/memories/", json={
                    "content": f"Bench store {index} at {time.time():.3f}: the graph page should show this at once.",
                    "cube": cube.pk})
                response.raise_for_status()
                posted = time.time() * 1000
                memory_id = response.json()["id"]
                page.wait_for_function("id => window.engramGraph.added.has(id)", arg=memory_id, timeout=30000)
                appeared = page.evaluate("id => window.engramGraph.added.get(id)", memory_id)
                if index >= 2:  # the first two warm the embedding model up
                    latencies.append(appeared - before)
                    posts.append(appeared - posted)
            figures["store_to_page_ms"] = percentiles(latencies)
            figures["after_response_ms"] = percentiles(posts)
            browser.close()
    figures["load_average_after"] = load_average()
    print(json.dumps(figures, indent=2))
    write_json(args.json, figures)


if __name__ == "__main__":
    main()
