"""Reads of Thoughtbox's thought sessions: lists, one session, its thoughts, a client's current session,
and the chain drawn as a tree.

A session is only ever read by its owner: every query starts from ``owner=actor``, so another user's
session, an unknown id and a malformed one all give the same NotFound (code "session_not_found").

``ChainReplay`` is the one statement of how thoughts link: it replays a session's appends in order and
answers, for each thought, which earlier thought is its parent (the link the hash chain signs), which one a
branch forks from and which one a revision revises. The append service, chain verification, the export and
the tree all use it, so they can never disagree about the shape of a chain.
"""
from __future__ import annotations

from django.db.models import Count, Max, Q, QuerySet

from apps.accounts.models import User
from apps.core.exceptions import NotFound
from apps.core.timestamps import iso_or_none, iso_timestamp
from apps.core.validation import parse_uuid
from apps.reasoning.models import Thought, ThoughtSession


class ChainReplay:
    """The state of a session's chain after some of its thoughts, fed in append order with ``add``.

    Rules (Thoughtbox's, made exact):
    - a thought's parent is the previous thought of its own line (the main line is branch id "");
    - the first thought of a branch has as parent the thought it forks from, ``branch_from_thought``
      looked up by ``find``; the first thought of the main line has none (its parent hash is "genesis");
    - ``find(number, branch_id)`` is the latest thought with that number on the same branch, else on the
      main line, else on any branch: later thoughts of a branch may repeat ``branchFromThought``, and a
      branch may fork from another branch's thought.
    """

    def __init__(self) -> None:
        self.last_of_line: dict[str, Thought] = {}
        self.by_line_number: dict[tuple[str, int], Thought] = {}
        self.by_number: dict[int, Thought] = {}

    def find(self, number: int | None, branch_id: str = "") -> Thought | None:
        if number is None:
            return None
        return (self.by_line_number.get((branch_id, number)) or self.by_line_number.get(("", number))
                or self.by_number.get(number))

    def parent_of(self, thought: Thought) -> Thought | None:
        if thought.branch_id in self.last_of_line:
            return self.last_of_line[thought.branch_id]
        if thought.branch_id:
            return self.find(thought.branch_from_thought, thought.branch_id)
        return None

    def fork_of(self, thought: Thought) -> Thought | None:
        """The thought a branch thought forks from (for every thought of the branch, not only its first)."""
        return self.find(thought.branch_from_thought, thought.branch_id) if thought.branch_id else None

    def add(self, thought: Thought) -> None:
        self.last_of_line[thought.branch_id] = thought
        self.by_line_number[(thought.branch_id, thought.thought_number)] = thought
        self.by_number[thought.thought_number] = thought

    def numbers(self) -> list[int]:
        return sorted(self.by_number)

    @property
    def branches(self) -> list[str]:
        """The branch ids, in the order the branches started (a dict keeps its first insertion order)."""
        return [line for line in self.last_of_line if line]


def parse_session_id(value, *, field: str = "session_id"):
    return parse_uuid(value, field=field, label="Session", code="session_not_found")


def sessions_owned(*, actor: User, include_deleted: bool = False) -> QuerySet[ThoughtSession]:
    queryset = ThoughtSession.objects.filter(owner=actor)
    return queryset if include_deleted else queryset.filter(deleted_at__isnull=True)


def session_list(*, actor: User, query: str | None = None, tag: str | None = None,
                 include_deleted: bool = False) -> QuerySet[ThoughtSession]:
    """The actor's sessions, most recently updated first, each annotated with ``thought_count`` and
    ``last_thought_at``. ``query`` matches words of the title or a whole tag; ``tag`` one whole tag."""
    queryset = sessions_owned(actor=actor, include_deleted=include_deleted)
    if query and query.strip():
        query = query.strip()
        queryset = queryset.filter(Q(title__icontains=query) | Q(tags__contains=[query.lower()]))
    if tag and tag.strip():
        queryset = queryset.filter(tags__contains=[tag.strip().lower()])
    return queryset.annotate(thought_count=Count("thoughts"), last_thought_at=Max("thoughts__created_at")).order_by(
        "-updated_at", "-created_at")


def session_get(*, actor: User, session_id, include_deleted: bool = False, field: str = "session_id") -> ThoughtSession:
    session = sessions_owned(actor=actor, include_deleted=include_deleted).filter(
        pk=parse_session_id(session_id, field=field)).first()
    if session is None:
        raise NotFound(f"Session {session_id!r} not found: list your sessions (thoughtbox://init/sessions) for "
                       f"their ids, or leave session_id out to use the current one.",
                       code="session_not_found", extra={"field": field})
    return session


def thoughts_of(session: ThoughtSession) -> list[Thought]:
    """A session's thoughts in append order (the order the chain was built in)."""
    return list(Thought.objects.filter(session=session).order_by("created_at", "id"))


def session_thoughts(*, actor: User, session_id, include_deleted: bool = False) -> list[Thought]:
    return thoughts_of(session_get(actor=actor, session_id=session_id, include_deleted=include_deleted))


def session_current(*, actor: User, client_key: str) -> ThoughtSession | None:
    """The client's current session: its most recently updated session that is neither completed (a final
    thought closes it) nor deleted. None when the client has none, so its next thought starts one."""
    return (sessions_owned(actor=actor).filter(client_key=client_key, completed_at__isnull=True)
            .order_by("-updated_at", "-created_at").first())


def session_latest(*, actor: User, client_key: str | None = None) -> ThoughtSession | None:
    """The most recently updated live session, completed or not: of the client when ``client_key`` is
    given, else of any of the actor's clients. What "the current session" means for reads such as an
    export, which usually come right after the final thought closed the session."""
    queryset = sessions_owned(actor=actor)
    if client_key is not None:
        queryset = queryset.filter(client_key=client_key)
    return queryset.order_by("-updated_at", "-created_at").first()


def session_dict(session: ThoughtSession) -> dict:
    """The session as the seed's export has it (camelCase), plus when it was completed or deleted."""
    return {
        "id": str(session.pk), "title": session.title, "tags": list(session.tags),
        "createdAt": iso_timestamp(session.created_at), "updatedAt": iso_timestamp(session.updated_at),
        "completedAt": iso_or_none(session.completed_at), "deletedAt": iso_or_none(session.deleted_at),
    }


def linked_thoughts(thoughts: list[Thought]) -> list[dict]:
    """Each thought (in append order) with its links as ids: ``prev`` (its parent in the chain), ``next``
    (the thoughts whose parent it is: more than one where a branch forks), ``branchOrigin`` (the thought a
    branch forks from) and ``revisesNode`` (the thought a revision revises)."""
    replay = ChainReplay()
    links: dict = {}
    for thought in thoughts:
        parent, fork = replay.parent_of(thought), replay.fork_of(thought)
        revised = replay.find(thought.revises_thought, thought.branch_id) if thought.is_revision else None
        if parent is not None:  # a parent was added before its child, so its link already exists
            links[parent.pk]["next"].append(str(thought.pk))
        links[thought.pk] = {"thought": thought, "prev": _id_or_none(parent), "next": [],
                             "branchOrigin": _id_or_none(fork), "revisesNode": _id_or_none(revised)}
        replay.add(thought)
    return list(links.values())


def _id_or_none(thought: Thought | None) -> str | None:
    return str(thought.pk) if thought is not None else None


def _tree_node(link: dict) -> dict:
    thought: Thought = link["thought"]
    return {
        "id": str(thought.pk), "number": thought.thought_number, "totalThoughts": thought.total_thoughts,
        "content": thought.thought, "timestamp": iso_timestamp(thought.created_at),
        "branchId": thought.branch_id or None, "branchFromThought": thought.branch_from_thought,
        "isRevision": thought.is_revision, "revisesThought": thought.revises_thought,
        "nextThoughtNeeded": thought.next_thought_needed, "needsMoreThoughts": thought.needs_more_thoughts,
        "agentId": thought.agent_id, "memoryId": str(thought.node_id) if thought.node_id else None,
        "contentHash": thought.content_hash, "parentHash": thought.parent_hash,
        "prev": link["prev"], "next": link["next"], "branchOrigin": link["branchOrigin"],
        "revisesNode": link["revisesNode"],
    }


def session_tree(*, actor: User, session_id, include_deleted: bool = False) -> dict:
    """The chain for drawing: ``main`` (the main line's thoughts in order) and ``branches`` (each with its
    id, the thought number and node it forks from, and its thoughts in order); every node carries its
    links (prev/next/branchOrigin/revisesNode) as ids, so revisions can point at what they revise."""
    session = session_get(actor=actor, session_id=session_id, include_deleted=include_deleted)
    return tree_of(session, thoughts_of(session))


def tree_of(session: ThoughtSession, thoughts: list[Thought]) -> dict:
    """``session_tree`` of a session and its thoughts that the caller already read."""
    main: list[dict] = []
    branches: dict[str, dict] = {}
    for link in linked_thoughts(thoughts):
        node = _tree_node(link)
        if not node["branchId"]:
            main.append(node)
            continue
        branch = branches.setdefault(node["branchId"], {
            "branchId": node["branchId"], "fromThought": node["branchFromThought"], "origin": node["branchOrigin"],
            "thoughts": [],
        })
        branch["thoughts"].append(node)
    return {"session": session_dict(session), "main": main, "branches": list(branches.values()),
            "count": len(main) + sum(len(b["thoughts"]) for b in branches.values())}
