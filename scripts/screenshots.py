"""Screenshots of Engram's main pages for the docs, at 1440x900 and 390x844, into docs/screenshots/<page>-<size>.png.

    make screenshots                      # all pages into docs/screenshots/, with its README.md; ~3 minutes
    .venv/bin/python scripts/screenshots.py --only home --only graph --out /tmp/shots

A demo account (scripts/demo.py: ~300 memories in three cubes with their links, a project, a thought session, a
notebook that ran, chats, a dream, a gardener cycle, a recall benchmark, ...) is made afresh in a database of its own
(engram_screenshots, dropped first; the main `engram` database is never touched), then served by the ASGI app on
uvicorn in this process (static files from the checkout, as `runserver` serves them) and photographed with Debian's
Chromium. The pages are the navigation's (apps/dashboard/views.PALETTE_PAGES, so a new page is photographed without
changing this script), less its forms, plus one of each detail page, the login page and the admin. Files the demo
writes (exports, notebooks) go to a temporary folder. A PNG over 400 KB is shrunk with pngquant (a palette of at
most 256 colours) when pngquant is installed (apt-get install pngquant), to keep the repository small.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import fresh_database  # noqa: E402

DATABASE = "engram_screenshots"
USERNAME, PASSWORD = "maria", "maria-demo-password-not-secret"
SIZES = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# The navigation's forms and help are not pages worth a picture.
NOT_PICTURED = {"dashboard:memory-create", "chat:new", "dashboard:token-create", "dashboard:shortcuts"}
# Pages pictured with a query, so that they show results.
QUERIES = {"dashboard:search": "?q=when+to+water+the+tomatoes"}
MAX_BYTES = 400_000


def pages(demo) -> list[tuple[str, str, str]]:
    """(file name, title, path) of every page to photograph, in the order of the navigation."""
    from django.urls import reverse
    from django.utils.text import slugify

    from apps.dashboard.views import PALETTE_PAGES, STAFF_PAGES

    listed = [(slugify(f"{section} {title}"), f"{section}: {title}" if section else title,
               reverse(name) + QUERIES.get(name, ""))
              for section, title, name, _ in PALETTE_PAGES + STAFF_PAGES if name not in NOT_PICTURED]
    tomato = next(memory for memory in demo.memories if memory.content.startswith("The tomatoes went into"))
    return [("login", "Log in", reverse("dashboard:login")),
            *listed,
            ("memory-detail", "A memory", reverse("dashboard:memory-detail", args=[tomato.pk])),
            ("cube-detail", "A shared cube", reverse("cubes:cube-detail", args=[demo.cubes["work"].pk])),
            ("chat-conversation", "A conversation", reverse("chat:session", args=[demo.chat_session.pk])),
            ("project-detail", "A project", reverse("projects:project-detail", args=[demo.project.pk])),
            ("project-issue", "A project's issue", reverse("projects:issue-detail", args=[demo.issue.pk])),
            ("cognition-session", "Cognition: a session", reverse("dashboard:cognition-session",
                                                                  args=[demo.cg_session.pk])),
            ("cognition-benchmark", "Cognition: a recall run", reverse("dashboard:cognition-benchmark",
                                                                       args=[demo.benchmark.pk])),
            ("reasoning-session", "Reasoning: a thought session", reverse("reasoning:session-detail",
                                                                          args=[demo.thought_session.pk])),
            ("reasoning-notebook", "Reasoning: a notebook", reverse("reasoning:notebook-detail",
                                                                    args=[demo.notebook.pk])),
            ("reasoning-model", "Reasoning: a mental model", reverse("reasoning:model-detail", args=[demo.model])),
            ("admin-memories", "Admin: memories", reverse("admin:memories_memory_changelist"))]


def index(wanted: list[tuple[str, str, str]]) -> str:
    """docs/screenshots/README.md: a table of the pictures."""
    def picture(name: str, title: str, size: str, width: int) -> str:
        return f'<a href="{name}-{size}.png"><img src="{name}-{size}.png" width="{width}" alt="{title}, {size}"></a>'

    rows = "\n".join(f"| {title} | {picture(name, title, 'desktop', 360)} | {picture(name, title, 'phone', 120)} |"
                     for name, title, _ in wanted)
    return f"""# Screenshots

Engram's main pages with a demo account (about 300 memories in three cubes, a project, a thought session, a notebook,
chats, a dream, a gardener cycle, a recall benchmark), at 1440x900 and 390x844. Made by `make screenshots`
([scripts/screenshots.py](../../scripts/screenshots.py); `--only NAME` for one page, `--out DIR` elsewhere); this
file is written with them.

| Page | Desktop (1440x900) | Phone (390x844) |
| --- | --- | --- |
{rows}
"""


def settle(page, name: str) -> None:
    """Wait for what a page draws after loading."""
    if name == "graph":
        page.wait_for_function("window.engramGraph && window.engramGraph.graph.order > 0", timeout=60_000)
        time.sleep(8)  # ForceAtlas2 spreads the graph out in its worker; a picture, so a fixed pause will do
        page.evaluate("window.engramGraph.layout.stop()")
        time.sleep(1.5)
    elif name == "api-docs":
        page.locator(".swagger-ui .opblock-tag").first.wait_for()
    page.wait_for_load_state("networkidle")


def save(png: bytes, path: Path) -> str:
    """Write ``png``; one over MAX_BYTES is shrunk by pngquant when it is installed. Says what it wrote."""
    path.write_bytes(png)
    if len(png) > MAX_BYTES:
        if not shutil.which("pngquant"):
            return f"{len(png) // 1000} KB, over {MAX_BYTES // 1000} KB: install pngquant to shrink it"
        subprocess.run(["pngquant", "--force", "--skip-if-larger", "--quality", "70-95", "--output", str(path),
                        str(path)], check=False)
    return f"{path.stat().st_size // 1000} KB"


@contextmanager
def serving(app):
    """uvicorn serving ``app`` from a thread of this process on a free loopback port; yields its base URL."""
    import socket

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise SystemExit("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--only", action="append", help="photograph only this page (by its file name, e.g. graph)")
    parser.add_argument("--memories", type=int, default=300)
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="engram-screenshots-"))
    scratch.chmod(0o711)  # notebook cells run as an unprivileged user, who must pass through it
    for variable, folder in (("ENGRAM_EXPORT_DIR", "exports"), ("ENGRAM_NOTEBOOK_DIR", "notebooks"),
                             ("ENGRAM_MEDIA_DIR", "media")):
        os.environ[variable] = str(scratch / folder)
    os.environ["ENGRAM_NOTEBOOK_EXECUTION"] = "true"  # the notebook's cell runs, so its page shows an output
    try:
        fresh_database(DATABASE)
        shoot(args)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def shoot(args) -> None:
    from django.conf import settings

    # Static files from the checkout's folders, as runserver serves them: nothing is collected into var/ (so
    # WhiteNoise's warning about var/staticfiles is beside the point).
    warnings.filterwarnings("ignore", message="No directory at")
    settings.STORAGES = {**settings.STORAGES,
                         "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
    from playwright.sync_api import sync_playwright

    from apps.accounts.models import User
    from config.asgi import application
    from scripts.demo import seed

    started = time.perf_counter()
    owner = User.objects.create_superuser(USERNAME, f"{USERNAME}@example.com", PASSWORD)
    friend = User.objects.create_user("tomas", "tomas@example.com", PASSWORD)
    demo = seed(owner, friend, memories=args.memories)
    print(f"seeded the demo account in {time.perf_counter() - started:.0f} s")
    wanted = pages(demo)
    if args.only:
        unknown = set(args.only) - {name for name, _, _ in wanted}
        if unknown:
            raise SystemExit(f"--only: no page named {', '.join(sorted(unknown))}; the pages: "
                             f"{', '.join(name for name, _, _ in wanted)}")
        wanted = [page for page in wanted if page[0] in args.only]
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "1"  # Playwright's event loop runs in this thread from here on
    with serving(ASGIStaticFilesHandler(application)) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for size, viewport in SIZES.items():
            visitor = browser.new_context(viewport=viewport).new_page()
            user = browser.new_context(viewport=viewport).new_page()
            user.goto(url + "/login/")
            user.get_by_label("Username").fill(USERNAME)
            user.get_by_label("Password").fill(PASSWORD)
            user.get_by_role("button", name="Log in").click()
            user.wait_for_url(url + "/")
            for name, _, path in wanted:
                page = visitor if name == "login" else user
                page.goto(url + path)
                settle(page, name)
                print(f"{name}-{size}.png  {save(page.screenshot(), args.out / f'{name}-{size}.png')}")
        browser.close()
    if not args.only:  # the whole set: its index, and no picture of a page that is gone
        made = {f"{name}-{size}.png" for name, _, _ in wanted for size in SIZES}
        for old in [*args.out.glob("*-desktop.png"), *args.out.glob("*-phone.png")]:
            if old.name not in made:
                old.unlink()
        (args.out / "README.md").write_text(index(wanted))


if __name__ == "__main__":
    main()
