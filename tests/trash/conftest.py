"""Fixtures of the trash tests: one deleted thing of every kind for alice, each deleted through its own service as
the dashboard, REST or an agent would, a second apart (so the order of the list is known: the newest last here)."""
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.cognition.models import Tombstone
from apps.cognition.services.curation import node_forget
from apps.cubes.models import Cube
from apps.cubes.services import cube_register, cube_unregister
from apps.memories.models import Memory
from apps.memories.services import memory_delete
from apps.projects.models import Decision, Issue, Project, SharpEdge
from apps.projects.services import (
    decision_add, edge_add, entity_delete, issue_add, project_create, project_delete,
)
from apps.reasoning.models import Notebook, ThoughtSession
from apps.reasoning.services.notebooks import cell_add, notebook_create, notebook_delete
from apps.reasoning.services.thoughts import session_delete
from tests.cognition.curation_support import link, nodes
from tests.reasoning.thought_support import think


@dataclass
class Deleted:
    """alice's deleted things, by trash kind, and what stays live beside them."""
    memory: Memory
    forgotten: Memory
    neighbour: Memory  # live; the forgotten node's edge ran to it
    cube: Cube
    project: Project
    project_decision: Decision  # live, but hidden with its deleted project
    live_project: Project
    decision: Decision
    issue: Issue
    sharp_edge: SharpEdge
    thought_session: ThoughtSession
    notebook: Notebook

    def item_id(self, kind: str) -> str:
        return str(getattr(self, kind).pk)


# The kinds in the order the fixture deletes them: the trash lists the last first.
KINDS = ("memory", "forgotten", "cube", "project", "decision", "issue", "sharp_edge", "thought_session", "notebook")


MODELS = {"memory": Memory, "forgotten": Memory, "cube": Cube, "project": Project, "decision": Decision,
          "issue": Issue, "sharp_edge": SharpEdge, "thought_session": ThoughtSession, "notebook": Notebook}


def _stamp(model, pk, at) -> None:
    """Deletion times a second apart, so the newest-first order is the fixture's order reversed."""
    model.objects.filter(pk=pk).update(deleted_at=at)


@pytest.fixture
def deleted(user) -> Deleted:
    memory, forgotten, neighbour = nodes(user, "The spare key is under the blue flowerpot.",
                                         "The old wifi password was hunter2.", "The router sits in the hallway.")
    link(user, forgotten, neighbour, 0.8)
    memory_delete(actor=user, memory_id=memory.pk)
    node_forget(actor=user, node_id=forgotten.pk, reason="obsolete")

    cube = cube_register(actor=user, cube_id="garden-notes", name="Garden notes")
    cube_unregister(actor=user, cube_id=cube.pk)

    project = project_create(actor=user, name="greenhouse", current_goal="Automate the watering")
    project_decision = decision_add(actor=user, project_id=project.pk, title="Water at dawn").decision
    project_delete(actor=user, project_id=project.pk)

    live_project = project_create(actor=user, name="orchard")
    decision = decision_add(actor=user, project_id=live_project.pk, title="Prune in late winter").decision
    issue = issue_add(actor=user, project_id=live_project.pk, title="Aphids on the plum tree")
    sharp_edge = edge_add(actor=user, title="Copper tape does not stop slugs in the rain")
    for kind, entity in (("decision", decision), ("issue", issue), ("sharp_edge", sharp_edge)):
        entity_delete(actor=user, kind=kind, entity_id=entity.pk)

    thought_session = think(user, 1, "Which beds get the most sun?", session_title="Bed planning").session
    session_delete(actor=user, session_id=thought_session.pk)

    notebook = notebook_create(actor=user, title="Rainfall sums")
    cell_add(actor=user, notebook_id=notebook.pk, cell_type="code", filename="sum.js", content="console.log(1 + 1);")
    notebook_delete(actor=user, notebook_id=notebook.pk)

    world = Deleted(memory=memory, forgotten=forgotten, neighbour=neighbour, cube=cube, project=project,
                    project_decision=project_decision, live_project=live_project, decision=decision, issue=issue,
                    sharp_edge=sharp_edge, thought_session=thought_session, notebook=notebook)
    start = timezone.now() - timedelta(hours=1)
    for offset, kind in enumerate(KINDS):
        _stamp(MODELS[kind], world.item_id(kind), start + timedelta(seconds=offset))
    assert Tombstone.objects.filter(memory=forgotten).exists()
    return world
