"""Bob cannot see or touch Alice's reasoning through REST: every read and write of her thought sessions,
notebooks and cells answers "not found" (never "forbidden", which would confirm the id), every list leaves them
out, and her memories never become evidence in his analyses."""
import pytest

from apps.reasoning.services.notebooks import cell_add, notebook_create
from apps.reasoning.services.thoughts import thought_add

pytestmark = pytest.mark.django_db

SECRET = "Alice plans to migrate the billing service to Rust"


@pytest.fixture
def other_api(other_user, api_client_for):
    return api_client_for(other_user)


@pytest.fixture
def alices(user, store):
    added = thought_add(actor=user, client_key="alice-test", thought=SECRET, thought_number=1, total_thoughts=2,
                        next_thought_needed=True, session_title=SECRET)
    notebook = notebook_create(actor=user, title=SECRET)
    cell = cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="secret.js",
                    content=f"console.log({SECRET!r})")
    memory = store(user, SECRET)
    return {"session": added.session.pk, "notebook": notebook.pk, "cell": cell.pk, "memory": memory.pk}


def reads_and_writes(ids: dict) -> list[tuple[str, str, dict | None]]:
    session = f"/api/v1/reasoning/sessions/{ids['session']}/"
    notebook = f"/api/v1/reasoning/notebooks/{ids['notebook']}/"
    cell = f"{notebook}cells/{ids['cell']}/"
    return [
        ("get", session, None), ("delete", session, None), ("post", f"{session}restore/", {}),
        ("get", f"{session}export/", None), ("get", f"{session}verify/", None),
        ("post", "/api/v1/reasoning/thoughts/", {"session_id": str(ids["session"]), "thought": "mine now",
                                                 "thought_number": 2, "total_thoughts": 2,
                                                 "next_thought_needed": False}),
        ("get", notebook, None), ("delete", notebook, None), ("post", f"{notebook}restore/", {}),
        ("get", f"{notebook}export/", None), ("post", f"{notebook}dependencies/", {"dependencies": ["left-pad"]}),
        ("get", f"{notebook}cells/", None),
        ("post", f"{notebook}cells/", {"cell_type": "markdown", "content": "mine"}),
        ("get", cell, None), ("patch", cell, {"content": "mine"}), ("post", f"{cell}run/", {}),
    ]


def test_every_operation_on_alices_things_is_not_found_for_bob(other_api, alices):
    for method, url, body in reads_and_writes(alices):
        response = getattr(other_api, method)(url, body, format="json") if body is not None else \
            getattr(other_api, method)(url)
        assert response.status_code == 404, (method, url, response.content)
        assert SECRET not in response.content.decode()


def test_bobs_lists_leave_alices_things_out(other_api, alices):
    for url in ("/api/v1/reasoning/sessions/?deleted=include", "/api/v1/reasoning/notebooks/"):
        body = other_api.get(url).json()
        assert body["results"] == [], url


def test_alices_memories_are_never_evidence_for_bob(other_api, alices):
    body = other_api.post("/api/v1/reasoning/analysis/think/", {"problem": SECRET, "mode": "critical"},
                          format="json").json()
    assert str(alices["memory"]) not in {item["id"] for item in body["memories"]}
    assert "Rust" not in " ".join(item["content"] for item in body["memories"])


def test_alice_still_sees_her_own(api, alices):
    assert api.get(f"/api/v1/reasoning/sessions/{alices['session']}/").status_code == 200
    assert api.get(f"/api/v1/reasoning/notebooks/{alices['notebook']}/cells/{alices['cell']}/").status_code == 200
