import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.utils import timezone

from apps.core.exceptions import InvalidInput, NotFound, PermissionDenied
from apps.cubes.models import Cube, CubeMembership
from apps.cubes.services import cube_ensure_personal
from apps.memories.models import Memory, MemoryVector
from apps.memories.services import memory_delete, memory_retrieve
from apps.projects.models import Decision, Issue, Session
from apps.projects.selectors import decision_get, edge_get, entity_get, episode_get, issue_get
from apps.projects.services import (
    decision_add, decision_update, edge_add, edge_update, entity_delete, entity_restore, episode_create, issue_add,
    issue_update, project_create, project_delete, project_restore,
)
from apps.core.validation import MAX_TITLE_CHARS
from apps.projects.validation import MAX_PHRASE_CHARS, MAX_TEXT_CHARS

EDGE_PATTERNS = [
    {"type": "code", "pattern": r"crypto\.randomUUID|crypto\.createHash", "description": "Node crypto usage"},
    {"type": "context", "pattern": "edge.*crypto|crypto.*edge", "description": "Crypto in edge context"},
]


def node_of(entity) -> Memory:
    return Memory.objects.get(pk=entity.node_id)


def add_decision(user, project, title="Use Supabase for backend", **fields):
    return decision_add(actor=user, project_id=project.pk, title=title, **fields).decision


def make_session(user, project) -> Session:
    return Session.objects.create(project=project, owner=user, started_at=timezone.now())


@pytest.fixture
def entities(user, project):
    """One entity of each kind in alice's project, by kind."""
    return {
        "decision": add_decision(user, project),
        "issue": issue_add(actor=user, project_id=project.pk, title="Safari login fails"),
        "sharp_edge": edge_add(actor=user, project_id=project.pk, title="Edge has no Node crypto"),
        "episode": episode_create(actor=user, session=make_session(user, project), title="Long debugging night",
                                  narrative="We chased the Safari bug."),
    }


# Decisions

def test_decision_add_records_everything_and_stores_its_node(user, project):
    result = decision_add(
        actor=user, project_id=str(project.pk), title="Build Mind from scratch instead of forking VibeMemo",
        description="Create our own memory system", context="Could not access VibeMemo source",
        reasoning="Full control, simpler architecture",
        alternatives=[{"option": "Fork VibeMemo", "rejected_because": "Can't verify source quality"},
                      {"option": "Buy"}],
        confidence=0.8, revisit_if="We need features VibeMemo already has",
        trigger_phrases=["why not vibememo", "build vs fork"],
    )
    decision = Decision.objects.get(pk=result.decision.pk)
    assert result.superseded is None
    assert decision.alternatives == [{"option": "Fork VibeMemo", "rejected_because": "Can't verify source quality"},
                                     {"option": "Buy", "rejected_because": ""}]
    assert (decision.confidence, decision.status, decision.cube_id, decision.owner) == (0.8, "active", project.cube_id,
                                                                                         user)
    node = node_of(decision)
    assert (node.kind, node.cube_id, node.category, node.tags) == ("decision", project.cube_id, "decision",
                                                                   ["mind", "decision"])
    assert node.metadata == {"entity": "decision", "entity_id": str(decision.pk), "project_id": str(project.pk)}
    assert node.content.startswith("Decision: Build Mind from scratch instead of forking VibeMemo\n")
    assert "Reasoning: Full control, simpler architecture" in node.content
    assert "Alternatives: Fork VibeMemo (rejected: Can't verify source quality); Buy" in node.content
    assert MemoryVector.objects.filter(memory=node).count() == 1
    found = memory_retrieve(actor=user, text="why did we build our own memory instead of forking", limit=1)
    assert found.items[0].memory.pk == node.pk


def test_decision_confidence_defaults_to_0_7(user, project):
    assert add_decision(user, project).confidence == 0.7


def test_decision_update_changes_fields_and_re_embeds_the_node(user, project):
    decision = add_decision(user, project, reasoning="Webhooks need long timeouts")
    before = MemoryVector.objects.get(memory_id=decision.node_id).embedding
    updated = decision_update(actor=user, decision_id=decision.pk, reasoning="Native Postgres and auth",
                              confidence=0.4, description=None)
    node = node_of(updated)
    assert updated.node_id == decision.node_id and updated.confidence == 0.4
    assert "Reasoning: Native Postgres and auth" in node.content and "Webhooks" not in node.content
    assert MemoryVector.objects.get(memory=node).embedding != before
    assert decision_get(actor=user, decision_id=decision.pk).reasoning == "Native Postgres and auth"


def test_decision_update_takes_only_its_own_arguments(user, project):
    decision = add_decision(user, project)
    with pytest.raises(TypeError):
        decision_update(actor=user, decision_id=decision.pk, project_id=uuid.uuid4())


@pytest.mark.parametrize(("old", "new", "old_phrases", "new_phrases"), [
    ("Use Supabase for backend", "use SUPABASE  for backend!", [], []),  # same normalised title
    ("Use Supabase for backend", "Use Supabase as the backend", [], []),  # similar title (cosine >= 0.85)
    ("Host on Vercel", "Move hosting to Fly.io", ["where do we host", "hosting"], ["Where do we host?", "hosting"]),
])
def test_a_decision_on_the_same_question_supersedes_the_old_one(user, project, old, new, old_phrases, new_phrases):
    earlier = add_decision(user, project, title=old, trigger_phrases=old_phrases)
    unrelated = add_decision(user, project, title="Deploy on Fridays only")
    result = decision_add(actor=user, project_id=project.pk, title=new, trigger_phrases=new_phrases)
    earlier.refresh_from_db()
    unrelated.refresh_from_db()
    assert result.superseded == earlier
    assert (earlier.status, earlier.superseded_by_id) == ("superseded", result.decision.pk)
    assert (unrelated.status, unrelated.superseded_by_id) == ("active", None)
    assert result.decision.status == "active"


def test_superseding_prefers_the_same_title_and_stays_within_the_project(user, project):
    other = project_create(actor=user, name="elsewhere")
    foreign = add_decision(user, other, title="Use Supabase for backend")
    similar = add_decision(user, project, title="Use Supabase as the backend")
    same = add_decision(user, project, title="Pick Postgres hosting")
    result = decision_add(actor=user, project_id=project.pk, title="pick postgres hosting")
    assert result.superseded == same
    foreign.refresh_from_db()
    similar.refresh_from_db()
    assert foreign.status == similar.status == "active"


def test_unrelated_and_superseded_decisions_are_not_superseded(user, project):
    old = add_decision(user, project, title="Use Redis for queues")
    newer = decision_add(actor=user, project_id=project.pk, title="Use Redis for queues").decision
    assert decision_add(actor=user, project_id=project.pk, title="Write docs in Markdown").superseded is None
    third = decision_add(actor=user, project_id=project.pk, title="Use Redis for queues")
    old.refresh_from_db()
    assert third.superseded == newer and old.superseded_by_id == newer.pk


def test_making_a_decision_active_again_clears_superseded_by(user, project):
    old = add_decision(user, project)
    add_decision(user, project)
    old.refresh_from_db()
    assert old.superseded_by_id is not None
    decision_update(actor=user, decision_id=old.pk, status="active")
    old.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("active", None)


# Issues

def test_issue_add_defaults_and_node(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="Safari login fails", description="Cookie dropped",
                      symptoms=["401 after redirect"], trigger_phrases=["safari login"])
    assert (issue.severity, issue.status, issue.attempts) == ("major", "open", [])
    node = node_of(issue)
    assert node.kind == "issue" and "Symptoms: 401 after redirect" in node.content
    assert issue_get(actor=user, issue_id=issue.pk) == issue


def test_issue_update_appends_attempts_and_never_loses_them(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="Safari login fails", severity="blocking")
    issue_update(actor=user, issue_id=issue.pk, add_attempt={"what": "SameSite=None", "result": "Still failing",
                                                              "learned": "Not a cookie scope issue"})
    updated = issue_update(actor=user, issue_id=str(issue.pk), status="investigating",
                           add_attempt={"what": "Disable ITP", "result": "Works"},
                           current_theory="Safari ITP blocks cross-domain cookies")
    issue.refresh_from_db()
    assert [a["what"] for a in issue.attempts] == ["SameSite=None", "Disable ITP"]
    assert updated.attempts == issue.attempts
    assert issue.attempts[0]["learned"] == "Not a cookie scope issue" and issue.attempts[1]["learned"] == ""
    assert all(a["at"].endswith("Z") or "+" in a["at"] for a in issue.attempts)
    assert issue.status == "investigating" and issue.severity == "blocking"
    assert issue.current_theory == "Safari ITP blocks cross-domain cookies"
    node = node_of(issue)
    assert "Attempt: SameSite=None -> Still failing (learned: Not a cookie scope issue)" in node.content
    assert "Current theory: Safari ITP" in node.content


def test_issue_resolution_stamps_and_reopening_clears(user, project):
    issue = issue_add(actor=user, project_id=project.pk, title="Bug")
    resolved = issue_update(actor=user, issue_id=issue.pk, status="resolved", resolution="Patched")
    assert resolved.resolved_at is not None and "Resolution: Patched" in node_of(resolved).content
    assert issue_update(actor=user, issue_id=issue.pk, status="open").resolved_at is None


def test_issue_update_counts_for_the_session(user, project):
    session = make_session(user, project)
    issue = issue_add(actor=user, project_id=project.pk, title="Bug", session=session)
    issue_update(actor=user, issue_id=issue.pk, current_theory="a", session=session)
    issue_update(actor=user, issue_id=issue.pk, current_theory="b", session=session)
    issue_update(actor=user, issue_id=issue.pk, current_theory="c")
    session.refresh_from_db()
    assert session.issue_updates == 2 and Issue.objects.get(pk=issue.pk).session == session


def test_someone_elses_session_is_refused(user, other_user, project, other_project):
    bobs = make_session(other_user, other_project)
    issue = issue_add(actor=user, project_id=project.pk, title="Bug")
    with pytest.raises(NotFound):
        issue_update(actor=user, issue_id=issue.pk, current_theory="x", session=bobs)
    with pytest.raises(NotFound):
        episode_create(actor=user, session=bobs, title="Mine", narrative="")
    bobs.refresh_from_db()
    assert bobs.issue_updates == 0


# Sharp edges

def test_edge_add_to_a_project_and_global(user, project):
    edge = edge_add(actor=user, project_id=project.pk, title="Vercel Edge can't use Node crypto",
                    workaround="Use Web Crypto API", detection_patterns=EDGE_PATTERNS,
                    symptoms=["crypto is not defined"], root_cause="V8 isolate", share_with_community=True)
    assert edge.project == project and edge.cube_id == project.cube_id and not edge.is_global
    assert [p["type"] for p in edge.detection_patterns] == ["code", "context"]
    node = node_of(edge)
    assert node.kind == "sharp_edge" and "Workaround: Use Web Crypto API" in node.content
    assert "Detects: Node crypto usage; Crypto in edge context" in node.content
    glob = edge_add(actor=user, title="Global gotcha")
    assert glob.is_global and glob.cube_id == cube_ensure_personal(actor=user).pk
    assert node_of(glob).metadata["project_id"] is None
    assert edge_get(actor=user, edge_id=glob.pk) == glob
    assert edge_add(actor=user, project_id="", title="Also global").is_global


def test_edge_update_validates_patterns_and_updates_the_node(user, project):
    edge = edge_add(actor=user, project_id=project.pk, title="Edge crypto", detection_patterns=EDGE_PATTERNS)
    with pytest.raises(InvalidInput) as caught:
        edge_update(actor=user, edge_id=edge.pk,
                    detection_patterns=[EDGE_PATTERNS[0], {"type": "code", "pattern": "("}])
    assert caught.value.field == "detection_patterns[1].pattern"
    updated = edge_update(actor=user, edge_id=edge.pk, workaround="Use self.crypto", symptoms=["boom"])
    assert updated.detection_patterns == edge_get(actor=user, edge_id=edge.pk).detection_patterns
    assert "Workaround: Use self.crypto" in node_of(updated).content


# Episodes

def test_episode_create_belongs_to_the_sessions_project(user, project):
    session = make_session(user, project)
    episode = episode_create(actor=user, session=session, title="Breakthrough on login", narrative="ITP it was.",
                             mood_arc=["stuck", "relieved"], lessons=["Test Safari first"], breakthroughs=["ITP"],
                             frustrations=["Hours of cookies"])
    assert (episode.project, episode.session, episode.cube_id) == (project, session, project.cube_id)
    node = node_of(episode)
    assert node.kind == "episode" and "Lessons: Test Safari first" in node.content
    assert episode_get(actor=user, episode_id=episode.pk) == episode


def test_episode_needs_a_session(user):
    with pytest.raises(InvalidInput) as caught:
        episode_create(actor=user, session=None, title="x", narrative="y")
    assert caught.value.field == "session_id"


# Delete and restore, any kind

@pytest.mark.parametrize("kind", ["decision", "issue", "sharp_edge", "episode"])
def test_delete_and_restore_take_the_node_along(user, entities, kind):
    entity = entities[kind]
    deleted = entity_delete(actor=user, kind=kind, entity_id=entity.pk)
    assert deleted.deleted_at is not None and node_of(entity).deleted_at is not None
    with pytest.raises(NotFound) as caught:
        entity_get(actor=user, kind=kind, entity_id=entity.pk)
    assert caught.value.code == "entity_not_found"
    assert entity_delete(actor=user, kind=kind, entity_id=entity.pk).deleted_at == deleted.deleted_at
    restored = entity_restore(actor=user, kind=kind, entity_id=entity.pk)
    assert restored.deleted_at is None and node_of(entity).deleted_at is None
    assert entity_get(actor=user, kind=kind, entity_id=entity.pk) == entity


def test_an_update_repairs_a_node_removed_separately(user, project):
    decision = add_decision(user, project)
    memory_delete(actor=user, memory_id=decision.node_id)
    decision_update(actor=user, decision_id=decision.pk, reasoning="Still Supabase")
    assert node_of(decision).deleted_at is None
    memory_delete(actor=user, memory_id=decision.node_id, soft=False)
    updated = decision_update(actor=user, decision_id=decision.pk, reasoning="Really")
    assert updated.node_id != decision.node_id and "Reasoning: Really" in node_of(updated).content


def test_deleting_a_project_hides_its_entities_and_their_nodes(user, project, entities):
    entity_delete(actor=user, kind="issue", entity_id=entities["issue"].pk)
    project_delete(actor=user, project_id=project.pk)
    for kind, entity in entities.items():
        with pytest.raises(NotFound):
            entity_get(actor=user, kind=kind, entity_id=entity.pk, include_deleted=True)
        assert node_of(entity).deleted_at is not None
    project_restore(actor=user, project_id=project.pk)
    for kind in ("decision", "sharp_edge", "episode"):
        assert entity_get(actor=user, kind=kind, entity_id=entities[kind].pk)
        assert node_of(entities[kind]).deleted_at is None
    assert node_of(entities["issue"]).deleted_at is not None  # deleted on its own before: stays deleted


# Isolation

@pytest.mark.parametrize("kind", ["decision", "issue", "sharp_edge", "episode"])
def test_bob_cannot_get_update_or_delete_alices_entities(user, other_user, entities, kind):
    entity = entities[kind]
    updates = {"decision": lambda: decision_update(actor=other_user, decision_id=entity.pk, title="mine"),
               "issue": lambda: issue_update(actor=other_user, issue_id=entity.pk, add_attempt={"what": "x",
                                                                                              "result": "y"}),
               "sharp_edge": lambda: edge_update(actor=other_user, edge_id=entity.pk, title="mine"),
               "episode": lambda: entity_delete(actor=other_user, kind=kind, entity_id=entity.pk)}
    for call in (lambda: entity_get(actor=other_user, kind=kind, entity_id=entity.pk), updates[kind],
                 lambda: entity_delete(actor=other_user, kind=kind, entity_id=entity.pk),
                 lambda: entity_restore(actor=other_user, kind=kind, entity_id=entity.pk)):
        with pytest.raises(NotFound) as caught:
            call()
        assert caught.value.code == "entity_not_found"
    entity.refresh_from_db()
    assert entity.title != "mine" and entity.deleted_at is None and getattr(entity, "attempts", []) == []


def test_bob_cannot_add_to_alices_project(user, other_user, project):
    calls = (lambda: decision_add(actor=other_user, project_id=project.pk, title="t"),
             lambda: issue_add(actor=other_user, project_id=project.pk, title="t"),
             lambda: edge_add(actor=other_user, project_id=project.pk, title="t"),
             lambda: episode_create(actor=other_user, session=make_session(user, project), title="t", narrative=""))
    for call in calls:
        with pytest.raises(NotFound):
            call()
    assert not Decision.objects.exists() and not Issue.objects.exists()


def test_a_reader_of_a_shared_cube_may_read_but_not_write(user, other_user):
    Cube.objects.create(id="team", name="Team", owner=user)
    CubeMembership.objects.create(cube_id="team", user=other_user, role=CubeMembership.Role.READER)
    shared = project_create(actor=user, name="shared", cube_id="team")
    decision = add_decision(user, shared)
    assert decision_get(actor=other_user, decision_id=decision.pk) == decision
    with pytest.raises(PermissionDenied):
        decision_update(actor=other_user, decision_id=decision.pk, title="mine")
    with pytest.raises(PermissionDenied):
        issue_add(actor=other_user, project_id=shared.pk, title="t")


# Bad input

@pytest.mark.parametrize("bad_id", [str(uuid.uuid4()), "iss_01HX", None])
def test_unknown_entity_ids_are_not_found(user, project, bad_id):
    for call, field in ((lambda: issue_update(actor=user, issue_id=bad_id, status="open"), "issue_id"),
                        (lambda: decision_update(actor=user, decision_id=bad_id, title="x"), "decision_id"),
                        (lambda: edge_update(actor=user, edge_id=bad_id, title="x"), "edge_id"),
                        (lambda: entity_delete(actor=user, kind="episode", entity_id=bad_id), "episode_id")):
        with pytest.raises(NotFound) as caught:
            call()
        assert (caught.value.code, caught.value.extra["field"]) == ("entity_not_found", field)
    with pytest.raises(NotFound) as caught:
        decision_add(actor=user, project_id=bad_id, title="x")
    assert caught.value.code == "project_not_found"


def test_unknown_kind_is_refused(user):
    with pytest.raises(InvalidInput) as caught:
        entity_delete(actor=user, kind="memory", entity_id=uuid.uuid4())
    assert caught.value.field == "kind" and "decision, issue, sharp_edge, episode" in caught.value.message


@pytest.mark.parametrize(("fields", "field"), [
    ({"confidence": 1.5}, "confidence"), ({"confidence": "high"}, "confidence"), ({"confidence": True}, "confidence"),
    ({"confidence": -0.1}, "confidence"), ({"title": ""}, "title"), ({"title": "t" * (MAX_TITLE_CHARS + 1)}, "title"),
    ({"reasoning": "r" * (MAX_TEXT_CHARS + 1)}, "reasoning"), ({"alternatives": [{"rejected_because": "x"}]},
                                                               "alternatives[0].option"),
    ({"alternatives": [{"option": "x", "why": "y"}]}, "alternatives[0].why"),
    ({"alternatives": "Fork"}, "alternatives"),
    ({"trigger_phrases": ["p" * (MAX_PHRASE_CHARS + 1)]}, "trigger_phrases[0]"),
    ({"trigger_phrases": ["p"] * 101}, "trigger_phrases"),
])
def test_decision_add_refuses_bad_input(user, project, fields, field):
    fields = {"title": "A decision", **fields}
    with pytest.raises(InvalidInput) as caught:
        decision_add(actor=user, project_id=project.pk, **fields)
    assert caught.value.field == field
    assert not Decision.objects.exists() and not Memory.objects.filter(kind="decision").exists()


@pytest.mark.parametrize(("fields", "field"), [
    ({"status": "closed"}, "status"), ({"severity": "critical"}, "severity"), ({"add_attempt": {"what": "x"}},
                                                                               "add_attempt.result"),
    ({"add_attempt": "tried"}, "add_attempt"), ({"add_attempt": {"what": "x", "result": "y", "when": "now"}},
                                                "add_attempt.when"),
    ({"resolution": "r" * (MAX_TEXT_CHARS + 1)}, "resolution"), ({"title": " "}, "title"),
])
def test_issue_update_refuses_bad_input_and_keeps_the_issue(user, project, fields, field):
    issue = issue_add(actor=user, project_id=project.pk, title="Bug")
    with pytest.raises(InvalidInput) as caught:
        issue_update(actor=user, issue_id=issue.pk, **fields)
    assert caught.value.field == field
    issue.refresh_from_db()
    assert (issue.status, issue.severity, issue.attempts, issue.title) == ("open", "major", [], "Bug")


@pytest.mark.parametrize(("fields", "field"), [
    ({"severity": "urgent"}, "severity"), ({"symptoms": "one"}, "symptoms"), ({"title": None}, "title"),
])
def test_issue_add_refuses_bad_input(user, project, fields, field):
    with pytest.raises(InvalidInput) as caught:
        issue_add(actor=user, project_id=project.pk, **{"title": "Bug", **fields})
    assert caught.value.field == field


@pytest.mark.parametrize(("fields", "field"), [
    ({"detection_patterns": [{"type": "regex", "pattern": "x"}]}, "detection_patterns[0].type"),
    ({"detection_patterns": [{"type": "code", "pattern": "x" * 501}]}, "detection_patterns[0].pattern"),
    ({"share_with_community": "yes"}, "share_with_community"), ({"workaround": "w" * (MAX_TEXT_CHARS + 1)},
                                                                "workaround"),
])
def test_edge_add_refuses_bad_input(user, project, fields, field):
    with pytest.raises(InvalidInput) as caught:
        edge_add(actor=user, project_id=project.pk, **{"title": "Edge", **fields})
    assert caught.value.field == field


@pytest.mark.django_db(transaction=True)
def test_concurrent_attempts_all_land(user, project):
    """Each update re-reads the attempts under a row lock; without it, concurrent appends overwrite."""
    issue = issue_add(actor=user, project_id=project.pk, title="Flaky deploy")
    session = make_session(user, project)

    def attempt(index: int) -> None:
        try:
            issue_update(actor=user, issue_id=issue.pk, add_attempt={"what": f"try {index}", "result": "no"},
                         session=session)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(attempt, range(6)))
    issue.refresh_from_db()
    session.refresh_from_db()
    assert sorted(a["what"] for a in issue.attempts) == [f"try {index}" for index in range(6)]
    assert session.issue_updates == 6
