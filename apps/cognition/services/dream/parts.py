"""The undo of a long operation (a dream, a gardener cycle), kept in parts: one UndoEntry whose snapshot starts empty,
and an UndoPart appended by each batch that changed something, with only the rows the snapshot did not hold yet
(services/undo.py joins them in order when the undo is read). Nothing is ever rewritten, so a batch's cost does not
grow with what earlier batches kept."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db import connection

from apps.cognition.models import UndoEntry, UndoPart
from apps.cognition.services.dream.work import Work, pair
from apps.cognition.services.undo import SNAPSHOT_VERSION
from apps.memories.models import Memory

ROW_SETS = ("memories", "vectors", "profiles", "links", "annotations")
# A dream's snapshot keeps the scratchpad items it committed too (the snapshots of its merges have none).
DREAM_ROW_SETS = (*ROW_SETS, "scratchpad")

def empty_snapshot() -> dict:
    return {"version": SNAPSHOT_VERSION, **{name: [] for name in DREAM_ROW_SETS},
            "made": {"memories": [], "links": []},
            "cubes": [], "covers": []}


@dataclass
class UndoHeld:
    """What an operation's undo holds so far, as sets of ids (read once when a worker takes a dream, then kept up to
    date batch by batch): the rows it keeps, by row set, and what the operation made. A batch's part adds only what
    is new."""

    kept: dict[str, set] = field(default_factory=lambda: {name: set() for name in DREAM_ROW_SETS})
    made_memories: set[str] = field(default_factory=set)
    made_links: set[int] = field(default_factory=set)
    # Memories whose rows it keeps or that the run made, and the node pairs of the links it keeps.
    memories: set[str] = field(default_factory=set)
    pairs: set[tuple[str, str]] = field(default_factory=set)
    cubes: set[str] = field(default_factory=set)

    def absorb(self, *, kept: dict[str, list], pairs: list, made_memories: list, made_links: list,
               cubes: list) -> None:
        for name, pks in kept.items():
            self.kept[name].update(pks)
        self.memories.update(str(pk) for pk in kept.get("memories", ()))
        self.pairs.update(pair(source, target) for source, target in pairs)
        self.made_memories.update(str(pk) for pk in made_memories)
        self.memories.update(str(pk) for pk in made_memories)
        self.made_links.update(made_links)
        self.cubes.update(cubes)

    def absorb_snapshot(self, snapshot: dict) -> None:
        self.absorb(kept={name: [row["pk"] for row in snapshot.get(name, [])] for name in DREAM_ROW_SETS},
                    pairs=[(row["fields"]["source"], row["fields"]["target"]) for row in snapshot.get("links", [])],
                    made_memories=snapshot.get("made", {}).get("memories", []),
                    made_links=snapshot.get("made", {}).get("links", []), cubes=snapshot.get("cubes", []))


def undo_held(entry: UndoEntry) -> UndoHeld:
    """An undo as sets: its entry's own snapshot, then the ids of its parts' rows, read in PostgreSQL (a part's
    rows are never loaded here)."""
    held = UndoHeld()
    held.absorb_snapshot(entry.snapshot)
    paths = [f"'$.{name}[*].pk'" for name in DREAM_ROW_SETS]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(f'jsonb_path_query_array(snapshot, {path})' for path in paths)}, "
            f"jsonb_path_query_array(snapshot, '$.links[*].fields.source'), "
            f"jsonb_path_query_array(snapshot, '$.links[*].fields.target'), "
            f"coalesce(snapshot #> '{{made,memories}}', '[]'), coalesce(snapshot #> '{{made,links}}', '[]'), "
            f"coalesce(snapshot -> 'cubes', '[]') FROM {UndoPart._meta.db_table} WHERE entry_id = %s ORDER BY seq",
            [entry.pk])
        for row in cursor.fetchall():
            row = [json.loads(value) if isinstance(value, str) else value for value in row]
            count = len(DREAM_ROW_SETS)
            held.absorb(kept=dict(zip(DREAM_ROW_SETS, row[:count])), pairs=list(zip(row[count], row[count + 1])),
                        made_memories=row[count + 2], made_links=row[count + 3], cubes=row[count + 4])
    return held


def undo_part(held: UndoHeld, work: Work) -> dict | None:
    """A batch's part of its operation's snapshot: each row as it was before the operation first changed it, that the
    snapshot does not hold yet, never a row the operation made itself nor a link to a node it made (the undo removes
    those nodes, and their links with them); what it made; the undos it covers (``work.merges``, whose snapshots
    join). None when the batch changed nothing."""
    if not (work.link_rows or work.made_links or work.merges or work.made_memories or work.rows):
        return None
    merged = {entry.pk: entry.snapshot for entry in UndoEntry.objects.filter(pk__in=work.merges)}
    merged = [merged[reversal_hash] for reversal_hash in work.merges]
    made_links = set(work.made_links) - held.made_links
    made_memories = ({str(pk) for pk in work.made_memories}
                     | {str(pk) for one in merged for pk in one["made"]["memories"]}) - held.made_memories
    part = {"version": SNAPSHOT_VERSION, **{name: [] for name in DREAM_ROW_SETS},
            "made": {"memories": sorted(made_memories), "links": sorted(made_links)}, "covers": list(work.merges)}
    added = {name: set() for name in DREAM_ROW_SETS}

    def add(name: str, rows: list[dict]) -> None:
        for row in rows:
            fields, pk = row["fields"], row["pk"]
            if pk in held.kept[name] or pk in added[name]:
                continue
            if name == "links" and (pk in held.made_links or pk in made_links):
                continue
            if any(str(value) in held.made_memories or str(value) in made_memories
                   for value in (pk, fields.get("memory", ""), fields.get("source", ""), fields.get("target", ""))):
                continue
            part[name].append(row)
            added[name].add(pk)

    add("links", work.link_rows)
    for one in [*merged, *work.rows]:
        for name in DREAM_ROW_SETS:
            add(name, one.get(name, []))
    part["cubes"] = sorted({str(cube) for cube in Memory.objects.filter(pk__in=work.touched).values_list(
        "cube_id", flat=True)} - held.cubes)
    return part
