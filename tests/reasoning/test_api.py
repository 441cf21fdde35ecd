"""The reasoning REST API: thought sessions (add, list, read, export, verify, delete, restore), notebooks and cells
(create, add, update, run, export, load), mental models, and the eight analyses; errors in the envelope, query
counts on the lists."""
import pytest

from apps.reasoning.models import Thought

pytestmark = pytest.mark.django_db

REASONING_OPERATIONS = {
    "/api/v1/reasoning/sessions/": {"get"},
    "/api/v1/reasoning/sessions/{session_id}/": {"get", "delete"},
    "/api/v1/reasoning/sessions/{session_id}/restore/": {"post"},
    "/api/v1/reasoning/sessions/{session_id}/export/": {"get"},
    "/api/v1/reasoning/sessions/{session_id}/verify/": {"get"},
    "/api/v1/reasoning/thoughts/": {"post"},
    "/api/v1/reasoning/notebooks/": {"get", "post"},
    "/api/v1/reasoning/notebooks/load/": {"post"},
    "/api/v1/reasoning/notebooks/{notebook_id}/": {"get", "delete"},
    "/api/v1/reasoning/notebooks/{notebook_id}/restore/": {"post"},
    "/api/v1/reasoning/notebooks/{notebook_id}/export/": {"get"},
    "/api/v1/reasoning/notebooks/{notebook_id}/dependencies/": {"post"},
    "/api/v1/reasoning/notebooks/{notebook_id}/cells/": {"get", "post"},
    "/api/v1/reasoning/notebooks/{notebook_id}/cells/{cell_id}/": {"get", "patch"},
    "/api/v1/reasoning/notebooks/{notebook_id}/cells/{cell_id}/run/": {"post"},
    "/api/v1/reasoning/models/": {"get"},
    "/api/v1/reasoning/models/tags/": {"get"},
    "/api/v1/reasoning/models/capability-graph/": {"get"},
    "/api/v1/reasoning/models/{name}/": {"get"},
    **{f"/api/v1/reasoning/analysis/{name}/": {"post"} for name in (
        "think", "analyze-systematically", "think-parallel", "decompose", "assess-confidence", "detect-bias",
        "detect-emotion", "analyze-reasoning")},
}
THOUGHTS = "/api/v1/reasoning/thoughts/"
SESSIONS = "/api/v1/reasoning/sessions/"
NOTEBOOKS = "/api/v1/reasoning/notebooks/"


def thought(number: int, text: str, *, total: int = 4, more: bool = True, **extra) -> dict:
    return {"thought": text, "thought_number": number, "total_thoughts": total, "next_thought_needed": more, **extra}


def post(api, url: str, body: dict, expect: int = 201) -> dict:
    response = api.post(url, body, format="json")
    assert response.status_code == expect, response.content
    return response.json()


def error_of(response, status: int) -> dict:
    assert response.status_code == status, response.content
    return response.json()["error"]


@pytest.fixture
def session(api) -> dict:
    """A session of alice's with a main line of three thoughts, a branch from 2 and a revision of 2."""
    first = post(api, THOUGHTS, thought(1, "Understand why the nightly import is slow", session_title="Slow import",
                                        session_tags=["perf", "import"]))
    post(api, THOUGHTS, thought(2, "The import does one INSERT per row"))
    post(api, THOUGHTS, thought(3, "Try COPY with batches of 10k rows", branch_from_thought=2, branch_id="copy"))
    post(api, THOUGHTS, thought(3, "Actually the indexes are rebuilt per row too", is_revision=True,
                                revises_thought=2))
    return first["session"]


def test_thoughts_build_a_session_with_branches_and_revisions(api, session):
    assert session["title"] == "Slow import" and session["tags"] == ["perf", "import"]
    detail = api.get(f"{SESSIONS}{session['id']}/").json()
    assert detail["session"]["thought_count"] == 4
    numbers = [(t["thought_number"], t["branch_id"], t["is_revision"]) for t in detail["thoughts"]]
    assert numbers == [(1, "", False), (2, "", False), (3, "copy", False), (3, "", True)]
    assert detail["thoughts"][0]["parent_hash"] == "genesis"
    assert detail["thoughts"][2]["parent_hash"] == detail["thoughts"][1]["content_hash"]


def test_final_thought_completes_and_thought_one_starts_a_new_session(api, session):
    last = post(api, THOUGHTS, thought(4, "Batch the import with COPY", more=False))
    assert last["is_final"] and last["session"]["id"] == session["id"] and last["session"]["completed_at"]
    again = post(api, THOUGHTS, thought(1, "A new problem"))
    assert again["session_created"] and again["session"]["id"] != session["id"]


def test_export_is_the_seed_format_and_verify_catches_tampering(api, session):
    export = api.get(f"{SESSIONS}{session['id']}/export/").json()
    assert export["session"]["id"] == session["id"] and export["session"]["tags"] == ["perf", "import"]
    nodes = {node["id"]: node for node in export["thoughts"]}
    [fork] = [node for node in nodes.values() if node["thought"]["number"] == 2 and not node["thought"].get("isRevision")]
    assert len(fork["next"]) == 2  # the main line's next thought and the branch
    assert export["integrity"]["valid"] is True

    assert api.get(f"{SESSIONS}{session['id']}/verify/").json() == {"valid": True, "checked": 4, "broken": []}
    Thought.objects.filter(session_id=session["id"], thought_number=2, is_revision=False).update(
        thought="The import is fast enough")
    verdict = api.get(f"{SESSIONS}{session['id']}/verify/").json()
    assert verdict["valid"] is False and [item["thoughtNumber"] for item in verdict["broken"]] == [2]


def test_thought_errors_name_the_field(api, session):
    missing = error_of(api.post(THOUGHTS, thought(5, "Revise nothing", is_revision=True, revises_thought=9),
                                format="json"), 404)
    assert missing["code"] == "thought_not_found" and "9" in missing["message"]
    zero = error_of(api.post(THOUGHTS, thought(0, "Zero"), format="json"), 400)
    assert "thought_number" in zero["details"]
    unknown = error_of(api.post(THOUGHTS, {**thought(1, "x"), "thoughtNumber": 1}, format="json"), 400)
    assert "thoughtNumber" in unknown["details"]
    wrong_type = error_of(api.post(THOUGHTS, {**thought(1, "x"), "next_thought_needed": "yes"}, format="json"), 400)
    assert "next_thought_needed" in wrong_type["details"]
    no_session = error_of(api.post(THOUGHTS, thought(2, "x", session_id="00000000-0000-0000-0000-000000000000"),
                                   format="json"), 404)
    assert no_session["code"] == "session_not_found"


def test_session_list_filters_and_keeps_its_query_count(api, session, django_assert_max_num_queries):
    post(api, THOUGHTS, thought(4, "Done", more=False))
    post(api, THOUGHTS, thought(1, "Plan the Q1 roadmap", session_title="Roadmap", session_tags=["planning"]))
    titles = [row["title"] for row in api.get(SESSIONS).json()["results"]]
    assert set(titles) == {"Slow import", "Roadmap"}
    assert [row["title"] for row in api.get(SESSIONS, {"tag": "perf"}).json()["results"]] == ["Slow import"]
    assert [row["title"] for row in api.get(SESSIONS, {"q": "roadmap"}).json()["results"]] == ["Roadmap"]
    with django_assert_max_num_queries(6):  # auth, token touch, count, page: not one per session
        api.get(SESSIONS)


def test_delete_and_restore_a_session(api, session):
    assert api.delete(f"{SESSIONS}{session['id']}/").status_code == 204
    assert [row["id"] for row in api.get(SESSIONS).json()["results"]] == []
    assert [row["id"] for row in api.get(SESSIONS, {"deleted": "include"}).json()["results"]] == [session["id"]]
    restored = post(api, f"{SESSIONS}{session['id']}/restore/", {}, expect=200)
    assert restored["id"] == session["id"] and restored["deleted_at"] is None


def test_notebook_cells_run_export_and_load(api):
    created = post(api, NOTEBOOKS, {"title": "Sums", "language": "typescript"})
    notebook_id = created["notebook"]["id"]
    assert created["notebook"]["cell_count"] == len(created["cells"])
    cell = post(api, f"{NOTEBOOKS}{notebook_id}/cells/", {
        "cell_type": "code", "filename": "sum.ts",
        "content": "const total: number = [1, 2, 3].reduce((a, b) => a + b, 0);\nconsole.log(`total=${total}`);"})
    cells = api.get(f"{NOTEBOOKS}{notebook_id}/cells/").json()
    assert cells[-1]["id"] == cell["id"]  # the whole list, unpaginated, as documented
    assert api.get(f"{NOTEBOOKS}{notebook_id}/").json()["notebook"]["cell_count"] == len(cells)
    ran = post(api, f"{NOTEBOOKS}{notebook_id}/cells/{cell['id']}/run/", {}, expect=200)
    assert ran["status"] == "completed" and "total=6" in ran["stdout"] and ran["exit_code"] == 0

    changed = api.patch(f"{NOTEBOOKS}{notebook_id}/cells/{cell['id']}/", {"content": "throw new Error('boom')"},
                        format="json").json()
    assert changed["content"] == "throw new Error('boom')"
    failed = post(api, f"{NOTEBOOKS}{notebook_id}/cells/{cell['id']}/run/", {}, expect=200)
    assert failed["status"] == "failed" and "boom" in failed["stderr"]

    exported = api.get(f"{NOTEBOOKS}{notebook_id}/export/").json()
    assert "sum.ts" in exported["text"] and exported["filename"].endswith(".src.md")
    loaded = post(api, f"{NOTEBOOKS}load/", {"text": exported["text"]})
    assert loaded["notebook"]["id"] != notebook_id and loaded["notebook"]["title"] == "Sums"
    assert [c["filename"] for c in loaded["cells"]] == ["sum.ts"]


def test_notebook_errors(api, settings):
    notebook_id = post(api, NOTEBOOKS, {"title": "Errors"})["notebook"]["id"]
    bad_name = error_of(api.post(f"{NOTEBOOKS}{notebook_id}/cells/", {
        "cell_type": "code", "filename": "../escape.js", "content": "1"}, format="json"), 400)
    assert bad_name["details"].get("field") == "filename"
    assert error_of(api.get(f"{NOTEBOOKS}not-a-uuid/"), 404)["code"] == "notebook_not_found"
    cell_missing = error_of(api.get(f"{NOTEBOOKS}{notebook_id}/cells/00000000-0000-0000-0000-000000000000/"), 404)
    assert cell_missing["code"] == "cell_not_found"
    assert error_of(api.post(f"{NOTEBOOKS}load/", {"text": 42}, format="json"), 400)["details"]["text"]

    cell = post(api, f"{NOTEBOOKS}{notebook_id}/cells/", {"cell_type": "code", "filename": "a.js",
                                                          "content": "console.log(1)"})
    settings.ENGRAM_NOTEBOOK_EXECUTION = False
    disabled = error_of(api.post(f"{NOTEBOOKS}{notebook_id}/cells/{cell['id']}/run/", {}, format="json"), 403)
    assert disabled["code"] == "execution_disabled" and "ENGRAM_NOTEBOOK_EXECUTION" in disabled["message"]


def test_a_server_that_cannot_run_cells_is_a_503(api, settings, tmp_path):
    notebook_id = post(api, NOTEBOOKS, {"title": "No compiler", "language": "typescript"})["notebook"]["id"]
    cell = post(api, f"{NOTEBOOKS}{notebook_id}/cells/", {"cell_type": "code", "filename": "main.ts",
                                                          "content": "console.log(1)"})
    settings.ENGRAM_NOTEBOOK_ESBUILD = str(tmp_path / "no-esbuild")
    settings.BASE_DIR = tmp_path  # no frontend/node_modules/.bin/esbuild there either
    error = error_of(api.post(f"{NOTEBOOKS}{notebook_id}/cells/{cell['id']}/run/", {}, format="json"), 503)
    assert error["code"] == "execution_failed" and "make frontend" in error["message"]


def test_notebook_list_keeps_its_query_count(api, django_assert_max_num_queries):
    for title in ("One", "Two", "Three"):
        post(api, NOTEBOOKS, {"title": title})
    rows = api.get(NOTEBOOKS).json()["results"]
    assert {row["title"] for row in rows} == {"One", "Two", "Three"}
    with django_assert_max_num_queries(6):
        api.get(NOTEBOOKS)
    gone = next(row for row in rows if row["title"] == "Two")
    assert api.delete(f"{NOTEBOOKS}{gone['id']}/").status_code == 204
    assert {row["title"] for row in api.get(NOTEBOOKS).json()["results"]} == {"One", "Three"}
    listed = api.get(NOTEBOOKS, {"deleted": "include"}).json()["results"]
    assert {row["title"] for row in listed} == {"One", "Two", "Three"}
    restored = post(api, f"{NOTEBOOKS}{gone['id']}/restore/", {}, expect=200)
    assert restored["notebook"]["deleted_at"] is None


def test_mental_models(api):
    models = api.get("/api/v1/reasoning/models/").json()["models"]
    assert len(models) == 15 and "first-principles" in {model["name"] for model in models}
    debugging = api.get("/api/v1/reasoning/models/", {"tag": "debugging"}).json()["models"]
    assert debugging and all("debugging" in model["tags"] for model in debugging)
    model = api.get("/api/v1/reasoning/models/five-whys/").json()
    assert model["steps"] and model["markdown"].startswith("#")
    assert error_of(api.get("/api/v1/reasoning/models/six-whys/"), 404)["code"] == "model_not_found"
    assert error_of(api.get("/api/v1/reasoning/models/", {"tag": "cooking"}), 400)["details"]["field"] == "tag"
    assert len(api.get("/api/v1/reasoning/models/tags/").json()["tags"]) == 9
    graph = api.get("/api/v1/reasoning/models/capability-graph/").json()
    assert graph["entities"] and graph["relations"]


ANALYSIS_EXAMPLES = {
    "think": {"problem": "How to optimize database query performance?", "mode": "analytical",
              "context": {"background": "PostgreSQL database with 1M records",
                          "constraints": ["No schema changes"], "goals": ["Reduce p95 latency to <100ms"]}},
    "analyze-systematically": {"problem": "Why is the system experiencing intermittent failures?"},
    "think-parallel": {"problem": "How should we approach the product roadmap for Q1?", "timeout": 30000},
    "decompose": {"problem": "Build a scalable web application", "max_depth": 2},
    "assess-confidence": {"reasoning": "Based on benchmark results, the optimization will improve throughput by 40%",
                          "evidence": ["Benchmark results showing 40% improvement"]},
    "detect-bias": {"reasoning": "All the data I've seen supports my hypothesis that users prefer feature A"},
    "detect-emotion": {"text": "I'm really excited about this new project! It's going to be amazing!"},
    "analyze-reasoning": {"reasoning": "The proposed solution is optimal because it addresses all requirements"},
}
ANALYSIS_KEYS = {
    "think": "conclusion", "analyze-systematically": "framework", "think-parallel": "conflicts",
    "decompose": "executionOrder", "assess-confidence": "overallConfidence", "detect-bias": "biases",
    "detect-emotion": "circumplex", "analyze-reasoning": "quality",
}


@pytest.mark.parametrize("name", list(ANALYSIS_EXAMPLES))
def test_each_analysis_answers_deterministically(api, name):
    body = post(api, f"/api/v1/reasoning/analysis/{name}/", ANALYSIS_EXAMPLES[name], expect=200)
    assert body["method"] == "deterministic" and ANALYSIS_KEYS[name] in body and "memories" in body


def test_analysis_uses_the_callers_memories(api, user, store):
    memory = store(user, "Intermittent failures in production were caused by connection pool exhaustion")
    body = post(api, "/api/v1/reasoning/analysis/analyze-systematically/",
                ANALYSIS_EXAMPLES["analyze-systematically"], expect=200)
    assert str(memory.pk) in {item["id"] for item in body["memories"]}


@pytest.mark.parametrize("name, body, field", [
    ("think", {"problem": "x", "mode": "lateral"}, "mode"),
    ("think", {"mode": "analytical"}, "problem"),
    ("analyze-systematically", {"problem": "x", "preferred_framework": "astrology"}, "preferred_framework"),
    ("think-parallel", {"problem": "x", "timeout": 10}, "timeout"),
    ("decompose", {"problem": "x", "max_depth": 9}, "max_depth"),
    ("assess-confidence", {"reasoning": "x", "evidence": "one"}, "evidence"),
    ("detect-emotion", {"text": "x", "include_discrete": "yes"}, "include_discrete"),
    ("analyze-reasoning", {"reasoning": "x", "extra": 1}, "extra"),
])
def test_analysis_bad_input_names_the_field(api, name, body, field):
    assert field in error_of(api.post(f"/api/v1/reasoning/analysis/{name}/", body, format="json"), 400)["details"]


def test_an_unreachable_model_is_a_503(api, settings):
    settings.ENGRAM_LLM_BASE_URL = "http://127.0.0.1:9/v1"
    settings.ENGRAM_LLM_TIMEOUT_SECONDS = 2
    error = error_of(api.post("/api/v1/reasoning/analysis/think/", ANALYSIS_EXAMPLES["think"], format="json"), 503)
    assert error["code"] == "llm_unavailable"
