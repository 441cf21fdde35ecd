"""The notebook sandbox with real node: output, limits (time, memory, processes, output size), no network,
and one notebook's cells kept out of another's directory. These call the runner directly (no database);
tests/reasoning/test_notebooks.py runs cells through the services."""
import json
import os
import time
import urllib.request
import uuid

import pytest
from django.conf import settings as django_settings

from apps.reasoning import sandbox
from tests.reasoning.notebook_support import esbuild, esbuild_binary, loopback_server, notebook_dir  # noqa: F401

pytestmark = pytest.mark.usefixtures("notebook_dir")


def run(code: str, *, filename: str = "cell.js", others: dict | None = None, key: int | None = None):
    key = key if key is not None else uuid.uuid4().int
    directory = django_settings.ENGRAM_NOTEBOOK_DIR / f"nb-{key}"
    return sandbox.run_cell(directory=directory, filename=filename, sources={filename: code, **(others or {})},
                            notebook_key=key)


def test_a_cell_prints_and_its_output_and_exit_code_are_recorded():
    result = run("console.log('hello', 6 * 7); console.error('to stderr')")
    assert result.succeeded
    assert result.stdout == "hello 42\n"
    assert result.stderr.startswith("to stderr")
    assert result.exit_code == 0
    assert result.duration_ms >= 0


def test_a_cell_that_throws_fails_with_its_error_and_exit_code():
    result = run("throw new Error('the cell broke')")
    assert not result.succeeded
    assert result.exit_code == 1
    assert "the cell broke" in result.stderr


def test_cells_import_each_other_by_file_name():
    result = run("const { square } = require('./math.js'); console.log(square(9));",
                 others={"math.js": "module.exports = { square: (n) => n * n };"})
    assert result.stdout == "81\n"


def test_typescript_with_types_runs_and_imports_another_typescript_cell(esbuild):
    code = ("import { greet, type Person } from './people';\n"
            "const ada: Person = { name: 'Ada', born: 1815 };\n"
            "const total: number = [1, 2, 3].reduce((a: number, b: number) => a + b, 0);\n"
            "console.log(greet(ada), total);")
    people = ("export interface Person { name: string; born: number }\n"
              "export function greet(p: Person): string { return `hello ${p.name} (${p.born})`; }")
    result = run(code, filename="main.ts", others={"people.ts": people})
    assert result.stderr == "" or "[engram]" in result.stderr
    assert result.succeeded, result.stderr
    assert result.stdout == "hello Ada (1815) 6\n"


def test_typescript_syntax_error_is_a_failed_run_naming_the_compiler(esbuild):
    result = run("const x: number = ;", filename="broken.ts")
    assert not result.succeeded
    assert "TypeScript could not be compiled" in result.stderr


def test_typescript_without_esbuild_names_make_frontend(settings, tmp_path):
    settings.ENGRAM_NOTEBOOK_ESBUILD = str(tmp_path / "missing-esbuild")
    settings.BASE_DIR = tmp_path
    with pytest.raises(sandbox.DomainError) as caught:
        run("console.log(1)", filename="x.ts")
    assert caught.value.code == "execution_failed"
    assert "make frontend" in caught.value.message


# Long enough for node to start and print on a loaded machine: these tests check what was printed before the kill.
PRINTS_THEN_LOOPS_SECONDS = 5


def test_an_endless_loop_is_killed_at_the_timeout(settings):
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = PRINTS_THEN_LOOPS_SECONDS
    result = run("console.log('started'); while (true) {}")
    assert not result.succeeded
    assert result.exit_code == sandbox.TIMEOUT_EXIT_CODE
    assert result.stdout == "started\n"
    assert f"timed out after {PRINTS_THEN_LOOPS_SECONDS} s" in result.stderr


def test_children_of_a_timed_out_cell_are_killed_too(settings):
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = PRINTS_THEN_LOOPS_SECONDS
    result = run("const { spawn } = require('child_process');"
                 "const child = spawn('sleep', ['30'], { stdio: 'inherit' });"
                 "console.log('child', child.pid); while (true) {}")
    assert result.exit_code == sandbox.TIMEOUT_EXIT_CODE
    pid = int(result.stdout.split()[1])
    assert _dies(pid)


def _dies(pid: int) -> bool:
    """The process ends: SIGKILL was sent to its group, and the kernel ends it a moment later, not at once."""
    for _ in range(200):  # up to 10 s
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie waiting for its parent."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_runaway_heap_growth_fails_cleanly_as_out_of_memory(settings):
    settings.ENGRAM_NOTEBOOK_MEMORY_MB = 64
    result = run("const hoard = []; while (true) { hoard.push(new Array(100000).fill(Math.random())); }")
    assert not result.succeeded
    assert "out of memory: the cell went over the notebook memory limit of 64 MB" in result.stderr


def test_memory_outside_the_heap_is_limited_too(settings):
    settings.ENGRAM_NOTEBOOK_MEMORY_MB = 64
    result = run("const hoard = []; for (let i = 0; i < 64; i++) hoard.push(Buffer.alloc(16 * 1024 * 1024, 1));"
                 "console.log('allocated a GB');")
    assert not result.succeeded
    assert "allocated a GB" not in result.stdout
    assert "out of memory" in result.stderr


@pytest.mark.netns
def test_a_cell_cannot_reach_the_network(loopback_server):
    # The server is reachable from outside the sandbox, so a cell that reached it would be seen.
    assert urllib.request.urlopen(loopback_server.url, timeout=5).read() == b"reached"
    loopback_server.requests.clear()
    code = (f"fetch('{loopback_server.url}cell').then(r => r.text()).then(t => console.log('got', t))"
            ".catch(e => { console.log('blocked', e.cause && e.cause.code); process.exitCode = 3; });")
    result = run(code)
    assert loopback_server.requests == []
    assert result.exit_code == 3
    assert result.stdout.startswith("blocked")
    assert "got" not in result.stdout


@pytest.mark.netns
def test_a_cell_cannot_reach_a_public_address():
    result = run("require('http').get('http://1.1.1.1/', () => console.log('connected'))"
                 ".on('error', (e) => { console.log(e.code); process.exitCode = 2; });")
    assert result.exit_code == 2
    assert "connected" not in result.stdout


def test_output_is_truncated_at_the_limit(settings):
    settings.ENGRAM_NOTEBOOK_OUTPUT_CHARS = 1000
    result = run("for (let i = 0; i < 5000; i++) console.log('line ' + i);")
    assert result.succeeded
    kept, note = result.stdout.split("\n[output truncated: ")
    assert len(kept) == 1000
    assert kept.startswith("line 0\n")
    assert note.endswith("not shown]")


def test_the_environment_is_minimal_and_cwd_is_the_notebook_directory(monkeypatch):
    monkeypatch.setenv("ENGRAM_SECRET_FOR_TEST", "do-not-leak")
    key = uuid.uuid4().int
    result = run("console.log(JSON.stringify({ keys: Object.keys(process.env).sort(), cwd: process.cwd(),"
                 " home: process.env.HOME }));", key=key)
    seen = json.loads(result.stdout)
    assert "ENGRAM_SECRET_FOR_TEST" not in seen["keys"]
    assert set(seen["keys"]) <= {"PATH", "HOME", "NODE_PATH", "LANG", "NO_COLOR"}
    assert seen["cwd"] == seen["home"]
    assert seen["cwd"].endswith(f"/nb-{key}")


requires_user_switch = pytest.mark.skipif(not sandbox.isolation().switch_user,
                                          reason="cells run as another user only when the server is root")


@requires_user_switch
def test_cells_run_as_the_notebooks_own_unprivileged_user():
    key = uuid.uuid4().int
    result = run("console.log(process.getuid())", key=key)
    assert int(result.stdout) == sandbox.sandbox_uid(key) != 0


@requires_user_switch
def test_a_cell_cannot_read_another_notebooks_directory():
    first, second = uuid.uuid4().int, uuid.uuid4().int
    secret = run("console.log('ok')", key=first, others={"secret.js": "// alice's private code"})
    assert secret.succeeded
    target = django_settings.ENGRAM_NOTEBOOK_DIR / f"nb-{first}" / "secret.js"
    result = run(f"try {{ console.log(require('fs').readFileSync({str(target)!r}, 'utf8')); }}"
                 f"catch (e) {{ console.log(e.code); }}", key=second)
    assert result.stdout.strip() == "EACCES"


@requires_user_switch
def test_a_cell_cannot_read_the_servers_private_files_or_signal_its_processes():
    secret = django_settings.ENGRAM_NOTEBOOK_DIR / "server-secret"
    secret.write_text("the server's secret key")
    secret.chmod(0o600)
    result = run(f"try {{ console.log(require('fs').readFileSync({str(secret)!r}, 'utf8')); }}"
                 f"catch (e) {{ console.log(e.code); }}"
                 f"try {{ process.kill({os.getpid()}, 0); console.log('signalled'); }}"
                 f"catch (e) {{ console.log(e.code); }}")
    assert result.stdout.split() == ["EACCES", "EPERM"]


@requires_user_switch
def test_the_process_limit_stops_a_fork_bomb(settings):
    settings.ENGRAM_NOTEBOOK_MAX_PROCESSES = 24
    # Every spawn ends in 'spawn' or 'error': count them all, however long that takes (the cell's time limit
    # bounds it). The children sleep past any run, so none frees its slot; the cell's exit kills them.
    code = ("const { spawn } = require('child_process'); let started = 0, refused = 0;"
            "const tally = () => { if (started + refused === 60) { console.log(started, refused); process.exit(0); } };"
            "for (let i = 0; i < 60; i++) { const c = spawn('sleep', ['600']);"
            " c.on('spawn', () => { started++; tally(); }); c.on('error', () => { refused++; tally(); }); }")
    result = run(code)
    assert result.succeeded, result.stderr
    started, refused = map(int, result.stdout.split())
    assert started + refused == 60
    assert refused > 0
    assert started < 24


def test_the_isolation_probe_reports_what_is_missing():
    probe = sandbox.isolation()
    assert bool(probe.network_command) != any("network isolation: unavailable" in note for note in probe.notes)


def test_a_cell_that_closes_its_output_still_gets_only_the_time_limit(settings):
    settings.ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = 1
    result = run("const fs = require('fs'); console.log('closing'); fs.closeSync(1); fs.closeSync(2); while (true) {}")
    assert result.exit_code == sandbox.TIMEOUT_EXIT_CODE
    assert "timed out after 1 s" in result.stderr


def test_a_busy_cell_whose_runner_died_is_ended_by_the_kernel(tmp_path):
    """Nothing waits for or kills this process, as after a worker's SIGKILL: RLIMIT_CPU ends the loop by itself."""
    import signal
    import subprocess

    limits = sandbox.Limits(timeout_seconds=0.1, memory_mb=64, output_chars=1000, max_processes=32)
    key = uuid.uuid4().int
    directory = django_settings.ENGRAM_NOTEBOOK_DIR / f"nb-{key}"
    sandbox.prepare_directory(directory, notebook_key=key)
    sandbox.write_sources(directory, {"spin.js": "for (;;) {}"})
    command = sandbox._sandbox_command("spin.js", notebook_key=key, limits=limits)
    assert f"--cpu={sandbox.cpu_seconds(limits)}" in command and sandbox.cpu_seconds(limits) == 3
    orphan = subprocess.Popen(command, cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        ended = orphan.wait(timeout=120)
    finally:  # a failing test must not leave the loop spinning
        if orphan.poll() is None:
            os.killpg(orphan.pid, signal.SIGKILL)
    assert ended in (-signal.SIGXCPU, -signal.SIGKILL, 128 + signal.SIGXCPU, 128 + signal.SIGKILL)
