"""Running notebook cells with node, under limits, and installing their npm packages.

Running code that an agent wrote is a risk, so execution is off unless ``ENGRAM_NOTEBOOK_EXECUTION`` is
true (see services/notebooks.py). When it runs, a cell runs as

    prlimit --data=<2 x memory> --nproc=<max processes> -- unshare --net -- setpriv --reuid=<uid> ... --
        node --max-old-space-size=<memory> <cell file>                      (server running as root), or
    prlimit --data=<2 x memory> -- unshare -rn -- prlimit --nproc=<max processes> -- node ...  (otherwise)

in its notebook's directory, in a new session (process group), with a minimal environment (PATH, HOME = the
notebook directory, NODE_PATH = its node_modules). The limits, and what each really does:

- **Time**: a wall-clock timeout (``ENGRAM_NOTEBOOK_TIMEOUT_SECONDS``, default 30 as in Thoughtbox). On
  expiry the whole process group is killed (SIGKILL), and so are stray children when the cell exits. Should the
  process running the cell die first (a worker killed mid-run), ``RLIMIT_CPU`` (twice the timeout, plus a few
  seconds) still ends a busy cell: the kernel kills it.
- **Memory**: V8's heap limit (``ENGRAM_NOTEBOOK_MEMORY_MB``, default 256) plus ``RLIMIT_DATA`` at twice that,
  which also bounds Buffers and other memory outside the V8 heap. ``RLIMIT_AS`` does not work: V8 reserves
  gigabytes of address space at start, so any useful address-space limit stops node from starting at all.
- **Processes**: ``RLIMIT_NPROC`` (``ENGRAM_NOTEBOOK_MAX_PROCESSES``, default 32) counts the processes and
  threads (node itself starts about ten) of one user id, and never applies to root. So when the server
  runs as root, each notebook's cells run as an unprivileged user id of their own
  (``ENGRAM_NOTEBOOK_SANDBOX_UID_BASE`` + a number derived from the notebook id) that owns only that
  notebook's directory (mode 0700): the limit bites, and a cell cannot read or change other notebooks or
  the server's own files beyond what any user may read, nor signal the server. When the server is not
  root, the cell runs in a user namespace of its own (``unshare -rn``), where the kernel counts only that
  run's processes, so the limit is set inside it; files are then the server user's to read (there is no
  other user to become). With neither, there is no process limit and the cell result says so.
- **Network**: a new, empty network namespace (``unshare --net`` as root, ``unshare -rn`` through an
  unprivileged user namespace otherwise): not even loopback is up, so nothing on the host or beyond is
  reachable. Where the host allows neither, cells run with the network and the result says
  "network isolation: unavailable on this host".
- **Output**: stdout and stderr are each kept up to ``ENGRAM_NOTEBOOK_OUTPUT_CHARS`` characters (default
  100000); the rest is read and dropped, with a note of how much.

TypeScript: node 20 cannot run .ts, so a TypeScript cell is first bundled with esbuild (the checkout's
frontend/node_modules/.bin/esbuild, built by ``make frontend``, or ``ENGRAM_NOTEBOOK_ESBUILD``) into
``.build/<cell>.mjs``: esbuild resolves the cell's relative imports of other cells (``./math``,
``./math.js`` or ``./math.ts``) from the sources and leaves npm packages as imports that node loads from
node_modules; a ``require`` is provided too. esbuild only strips types, it does not type-check. It executes
nothing of the cell's, so it runs without the limits, but as the notebook's user: a cell may have left links
in its directory, which esbuild must not follow with the server's rights.

npm install runs as the notebook's user too, in its directory (HOME and npm's cache there), with the server's
environment otherwise (registry, proxies) and the network on, ``--ignore-scripts`` so that a package cannot
run install scripts, under its own timeout (``ENGRAM_NOTEBOOK_INSTALL_TIMEOUT_SECONDS``, default 120).
"""
from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import selectors
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from apps.core.exceptions import DomainError, Unavailable

BUILD_DIR = ".build"
MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"
UID_SPAN = 100_000
TIMEOUT_EXIT_CODE = 124  # what coreutils' timeout(1) returns, so scripts and people recognise it
READ_CHUNK = 65536
GRACE_SECONDS = 2.0
CPU_GRACE_SECONDS = 2
USER_NAMESPACE = ("unshare", "-rn")
# A TypeScript cell is bundled as an ES module, where `require` does not exist; CommonJS-style cells use it.
ESM_REQUIRE_BANNER = "import { createRequire as __engramRequire } from 'node:module'; " \
                     "const require = __engramRequire(import.meta.url);"
# How often a watched run reports its output so far and asks whether to stop (see execute's ``watch``).
WATCH_SECONDS = 0.5
OOM_MARKERS = ("heap out of memory", "reached heap limit", "allocation failed", "cannot allocate memory",
               "out of memory")


@dataclass(frozen=True)
class Limits:
    timeout_seconds: float
    memory_mb: int
    output_chars: int
    max_processes: int

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            timeout_seconds=float(settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS),
            memory_mb=int(settings.ENGRAM_NOTEBOOK_MEMORY_MB),
            output_chars=int(settings.ENGRAM_NOTEBOOK_OUTPUT_CHARS),
            max_processes=int(settings.ENGRAM_NOTEBOOK_MAX_PROCESSES),
        )


@dataclass(frozen=True)
class Isolation:
    """What this host lets the sandbox do, probed once per process."""

    network_command: tuple[str, ...]  # the unshare prefix, empty when no network namespace is possible
    switch_user: bool  # root, with setpriv: cells run as a per-notebook unprivileged uid
    notes: tuple[str, ...] = field(default=())

    @property
    def user_namespace(self) -> bool:
        """Cells run in a user namespace of their own, where RLIMIT_NPROC counts only that run's processes."""
        return self.network_command[:2] == USER_NAMESPACE


@dataclass(frozen=True)
class Completed:
    """A finished process: its exit code (128 + signal when a signal ended it, 124 on timeout), its output
    (truncated), how long it ran, and whether the timeout or its watcher ended it."""

    exit_code: int
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool
    cancelled: bool = False


@dataclass(frozen=True)
class RunResult:
    exit_code: int
    stdout: str
    stderr: str
    duration_ms: int
    failure: str = ""  # why a limit or a cancel ended the run ("" when the code itself ended it)
    cancelled: bool = False

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0


def _succeeds(command: list[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _uid_base() -> int:
    return int(settings.ENGRAM_NOTEBOOK_SANDBOX_UID_BASE)


def _setpriv(uid: int) -> list[str]:
    """The command prefix that runs what follows as ``uid``, without the server's groups."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]


@functools.cache
def isolation() -> Isolation:
    """Probe once: can we make a network namespace (as root, or through a user namespace), and can we run
    cells as another user? Each probe runs the real command, so a container that forbids it is detected."""
    notes = []
    network_command: tuple[str, ...] = ()
    if shutil.which("unshare"):
        for candidate in (("unshare", "--net", "--"), (*USER_NAMESPACE, "--")):
            if _succeeds([*candidate, "true"]):
                network_command = candidate
                break
    if not network_command:
        notes.append("network isolation: unavailable on this host (no network namespace could be created); "
                     "the cell ran with the host's network")
    in_user_namespace = network_command[:2] == USER_NAMESPACE
    # A user namespace maps the server's uid to root inside it, so switching users there is not possible.
    switch_user = (os.geteuid() == 0 and shutil.which("setpriv") is not None and not in_user_namespace
                   and _succeeds([*_setpriv(_uid_base()), "true"]))
    if not switch_user and not in_user_namespace:
        notes.append("process limit: unavailable (cells run as the server's own user, outside any user "
                     "namespace, where RLIMIT_NPROC would count the server's own processes)")
    return Isolation(network_command=network_command, switch_user=switch_user, notes=tuple(notes))


def sandbox_uid(notebook_key: int) -> int:
    """The unprivileged uid a notebook's cells run as (two notebooks share one only by a rare collision)."""
    return _uid_base() + notebook_key % UID_SPAN


def prepare_directory(directory: Path, *, notebook_key: int) -> None:
    """Create the notebook directory (mode 0700), owned by the notebook's sandbox user when there is one."""
    root = directory.parent
    root.mkdir(parents=True, exist_ok=True)
    # Others may pass through the notebooks folder to their own directory, but not list it.
    root.chmod(0o711)
    directory.mkdir(exist_ok=True)
    directory.chmod(0o700)
    if isolation().switch_user:
        closed = next((folder for folder in root.resolve().parents if not folder.stat().st_mode & stat.S_IXOTH), None)
        if closed is not None:
            raise Unavailable(f"Notebook cells run as an unprivileged user, who cannot pass through {closed}: allow it "
                              f"(chmod o+x {closed}) or set ENGRAM_NOTEBOOK_DIR to a folder outside it.",
                              code="execution_failed")
        uid = sandbox_uid(notebook_key)
        os.chown(directory, uid, uid)


def write_sources(directory: Path, sources: dict[str, str]) -> None:
    """Write each code cell to its file, so that cells import each other by file name. The files are written
    afresh before every run (what a cell did to them does not carry over), never through a link a cell
    may have left in their place."""
    for filename, content in sources.items():
        path = directory / filename
        path.unlink(missing_ok=True)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(content + "\n")


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _exited(process: subprocess.Popen) -> bool:
    """Whether the process has ended, without reaping it (so its process group id cannot be reused yet)."""
    return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _text(data: bytearray, dropped: int, limit: int) -> str:
    text = data.decode("utf-8", errors="replace")
    extra = max(0, len(text) - limit)
    if extra or dropped:
        text = text[:limit]
        more = f"{extra} more characters" + (f" and {dropped} more bytes" if dropped else "")
        text += f"\n[output truncated: {more} not shown]"
    return text


# watch(stdout so far, stderr so far) -> True to stop the run.
Watch = Callable[[str, str], bool]


def execute(command: list[str], *, cwd: Path, env: dict[str, str], timeout: float, output_chars: int,
            watch: Watch | None = None) -> Completed:
    """Run a command in a new session, reading its output as it comes (so a chatty process never fills
    memory), and kill its whole process group on timeout and when it exits (stray children). ``watch``, when
    given, sees the output so far every WATCH_SECONDS while it runs, and stops the run by returning True."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise Unavailable(f"Could not start {command[0]}: {exc}.", code="execution_failed") from exc
    # Bytes kept per stream: UTF-8 needs at most 4 per character, so this holds output_chars characters.
    keep = output_chars * 4
    buffers = {process.stdout.fileno(): bytearray(), process.stderr.fileno(): bytearray()}
    dropped = dict.fromkeys(buffers, 0)
    timed_out = cancelled = False
    deadline = started + timeout
    next_watch = started + WATCH_SECONDS
    with selectors.DefaultSelector() as selector:
        for stream in (process.stdout, process.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                timed_out = not _exited(process)
                break
            if watch is not None and now >= next_watch:
                next_watch = now + WATCH_SECONDS
                out, err = list(buffers.values())
                stop = watch(out.decode("utf-8", errors="replace"), err.decode("utf-8", errors="replace"))
                if stop and not _exited(process):  # a process that has just ended finishes as it ended
                    cancelled = True
                    break
            wait = remaining if watch is None else max(min(remaining, next_watch - now), 0)
            if not selector.get_map():
                if _exited(process):
                    break
                time.sleep(min(wait, 0.05))  # it closed its output but runs on
                continue
            for key, _ in selector.select(timeout=wait):
                chunk = os.read(key.fd, READ_CHUNK)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                room = max(keep - len(buffers[key.fd]), 0)
                buffers[key.fd] += chunk[:room]
                dropped[key.fd] += len(chunk) - len(chunk[:room])
            if _exited(process) and deadline > time.monotonic() + GRACE_SECONDS:
                # The process is done: kill what it left behind, and wait only briefly for the pipes to close
                # (a child that escaped into its own session could hold them open).
                _kill_group(process)
                deadline = time.monotonic() + GRACE_SECONDS
    # The leader is not reaped yet, so the group id is still this run's: kill whatever is left of it.
    _kill_group(process)
    returncode = process.wait()
    process.stdout.close()
    process.stderr.close()
    duration_ms = int((time.monotonic() - started) * 1000)
    exit_code = TIMEOUT_EXIT_CODE if timed_out else (128 - returncode if returncode < 0 else returncode)
    out, err = list(buffers.values())
    out_dropped, err_dropped = list(dropped.values())
    return Completed(exit_code=exit_code, stdout=_text(out, out_dropped, output_chars),
                     stderr=_text(err, err_dropped, output_chars), duration_ms=duration_ms, timed_out=timed_out,
                     cancelled=cancelled)


def find_esbuild() -> str:
    configured = settings.ENGRAM_NOTEBOOK_ESBUILD
    candidates = [configured] if configured else []
    candidates += [str(settings.BASE_DIR / "frontend" / "node_modules" / ".bin" / "esbuild"), shutil.which("esbuild")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise Unavailable(
        "TypeScript cells need esbuild, which this server does not have: run `make frontend` in the Engram "
        "checkout (it installs frontend/node_modules/.bin/esbuild), or set ENGRAM_NOTEBOOK_ESBUILD to an esbuild "
        "binary.", code="execution_failed")


def _as_notebook_user(notebook_key: int) -> list[str]:
    """The command prefix that drops to the notebook's own unprivileged user (nothing when not root)."""
    return _setpriv(sandbox_uid(notebook_key)) if isolation().switch_user else []


def _bundle_typescript(directory: Path, filename: str, *, notebook_key: int,
                       limits: Limits) -> tuple[str | None, Completed | None]:
    """Bundle a TypeScript cell to .build/<cell>.mjs, as the notebook's user (a cell may have planted links in
    its directory; esbuild must not follow them with the server's rights). Returns the file to run, or
    esbuild's failed run (a syntax error is the cell's failure, reported like one)."""
    target = f"{BUILD_DIR}/{Path(filename).stem}.mjs"
    command = [*_as_notebook_user(notebook_key), find_esbuild(), filename, "--bundle", "--platform=node",
               "--format=esm", "--packages=external", "--log-level=warning", "--color=false", f"--outfile={target}",
               f"--banner:js={ESM_REQUIRE_BANNER}"]
    completed = execute(command, cwd=directory, env={"PATH": MINIMAL_PATH, "HOME": str(directory)},
                        timeout=limits.timeout_seconds, output_chars=limits.output_chars)
    return (None, completed) if completed.exit_code != 0 else (target, None)


def cpu_seconds(limits: Limits) -> int:
    """RLIMIT_CPU for a cell: the kernel ends a busy cell by itself even when nothing is left to kill it (a worker
    SIGKILLed mid-run left endless loops spinning for half an hour). Above the wall timeout, which normally ends the
    run first: node's threads together may use CPU faster than the clock on several cores."""
    return math.ceil(2 * limits.timeout_seconds) + CPU_GRACE_SECONDS


def _sandbox_command(script: str, *, notebook_key: int, limits: Limits) -> list[str]:
    sandbox = isolation()
    command = ["prlimit", f"--data={limits.memory_mb * 2 * 1024 * 1024}", f"--cpu={cpu_seconds(limits)}"]
    if sandbox.switch_user:
        command.append(f"--nproc={limits.max_processes}")  # applies once setpriv has switched users
    command += ["--", *sandbox.network_command, *_as_notebook_user(notebook_key)]
    if sandbox.user_namespace:
        command += ["prlimit", f"--nproc={limits.max_processes}", "--"]
    return [*command, "node", f"--max-old-space-size={limits.memory_mb}", script]


def _explain_failure(completed: Completed, limits: Limits) -> str:
    """The reason a run failed because of a limit, for the end of stderr ("" when it was the code)."""
    if completed.cancelled:
        return "cancelled: the process was killed"
    if completed.timed_out:
        return f"timed out after {limits.timeout_seconds:g} s (the notebook time limit); the process was killed"
    lowered = completed.stderr.lower()
    if completed.exit_code != 0 and any(marker in lowered for marker in OOM_MARKERS):
        return f"out of memory: the cell went over the notebook memory limit of {limits.memory_mb} MB"
    return ""


def run_cell(*, directory: Path, filename: str, sources: dict[str, str], notebook_key: int,
             limits: Limits | None = None, watch: Watch | None = None) -> RunResult:
    """Write every code cell of the notebook, then run ``filename`` in the sandbox (``watch``: see execute)."""
    limits = limits or Limits.from_settings()
    if not shutil.which("node") or not shutil.which("prlimit"):
        raise Unavailable("Running cells needs node (20 or later) and prlimit (util-linux) on the server's PATH.",
                          code="execution_failed")
    prepare_directory(directory, notebook_key=notebook_key)
    write_sources(directory, sources)
    script = filename
    if Path(filename).suffix in (".ts", ".mts"):
        script, failed_build = _bundle_typescript(directory, filename, notebook_key=notebook_key, limits=limits)
        if failed_build:
            return RunResult(exit_code=failed_build.exit_code, stdout=failed_build.stdout,
                             stderr=f"TypeScript could not be compiled:\n{failed_build.stderr}",
                             duration_ms=failed_build.duration_ms)
    env = {"PATH": MINIMAL_PATH, "HOME": str(directory), "NODE_PATH": str(directory / "node_modules"),
           "LANG": "C.UTF-8", "NO_COLOR": "1"}
    completed = execute(_sandbox_command(script, notebook_key=notebook_key, limits=limits), cwd=directory, env=env,
                        timeout=limits.timeout_seconds, output_chars=limits.output_chars, watch=watch)
    failure = _explain_failure(completed, limits)
    notes = [note for note in (failure,) if note] + list(isolation().notes)
    stderr = completed.stderr
    if notes:
        stderr = "\n".join(filter(None, [stderr.rstrip("\n"), *(f"[engram] {note}" for note in notes)]))
    return RunResult(exit_code=completed.exit_code, stdout=completed.stdout, stderr=stderr,
                     duration_ms=completed.duration_ms, failure=failure, cancelled=completed.cancelled)


@dataclass(frozen=True)
class Installed:
    versions: dict[str, str]  # every dependency in package.json -> the version now in node_modules
    output: str


def _installed_version(directory: Path, name: str, wanted: str) -> str:
    try:
        manifest = json.loads((directory / "node_modules" / name / "package.json").read_text(encoding="utf-8"))
        return str(manifest.get("version") or wanted)
    except (OSError, ValueError):
        return wanted


def npm_install(*, directory: Path, specs: list[str], notebook_key: int, package_name: str) -> Installed:
    """``npm install --save`` the specs in the notebook directory; a failure is a DomainError with npm's
    own message (an unknown package, a version that does not exist, the registry unreachable)."""
    if not shutil.which("npm"):
        raise Unavailable("Installing dependencies needs npm on the server's PATH.", code="execution_failed")
    prepare_directory(directory, notebook_key=notebook_key)
    manifest_path = directory / "package.json"
    if manifest_path.is_symlink() or not manifest_path.is_file():
        manifest_path.unlink(missing_ok=True)
        manifest_path.write_text(json.dumps({"name": package_name, "private": True, "dependencies": {}}, indent=2),
                                 encoding="utf-8")
        manifest_path.chmod(0o666)
    timeout = float(settings.ENGRAM_NOTEBOOK_INSTALL_TIMEOUT_SECONDS)
    command = [*_as_notebook_user(notebook_key), "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts",
               "--save", "--loglevel=error", "--", *specs]
    # The server's environment keeps its registry and proxy settings; npm writes only in the notebook directory.
    env = {**os.environ, "HOME": str(directory), "npm_config_cache": str(directory / ".npm-cache"),
           "npm_config_update_notifier": "false"}
    completed = execute(command, cwd=directory, env=env, timeout=timeout,
                        output_chars=int(settings.ENGRAM_NOTEBOOK_OUTPUT_CHARS))
    if completed.exit_code != 0:
        reason = f"timed out after {timeout:g} s" if completed.timed_out else completed.stderr.strip()[-2000:]
        raise DomainError(f"npm install {' '.join(specs)} failed: {reason}", code="install_failed",
                          extra={"exit_code": completed.exit_code})
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    wanted = manifest.get("dependencies") or {}
    versions = {name: _installed_version(directory, name, str(spec)) for name, spec in sorted(wanted.items())}
    return Installed(versions=versions, output=(completed.stdout + completed.stderr).strip())
