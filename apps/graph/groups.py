"""The only place that names channel-layer groups. Channels accepts letters, digits, `-_.` and fewer
than 100 characters; a cube id may be 100 characters long, so long ids are shortened with a hash."""
import hashlib

MAX_GROUP_NAME_CHARS = 99
CUBE_PREFIX = "graph.cube."
CELL_RUN_PREFIX = "reasoning.run."


def cube_group(cube_id: str) -> str:
    """The group of every socket watching one cube. Cube ids match ^[a-zA-Z0-9_-]+$ already."""
    name = CUBE_PREFIX + cube_id
    if len(name) <= MAX_GROUP_NAME_CHARS:
        return name
    # A readable head plus a digest of the whole id keeps distinct ids in distinct groups.
    digest = hashlib.sha256(cube_id.encode()).hexdigest()[:32]
    return f"{CUBE_PREFIX}{cube_id[:40]}.{digest}"


def cell_run_group(run_id) -> str:
    """The group of every socket watching one notebook cell run (a UUID: always short enough)."""
    return f"{CELL_RUN_PREFIX}{run_id}"


def health_probe_group(token: str) -> str:
    """A throwaway group that /healthz sends one message through, to prove the layer delivers."""
    return f"health.{token}"
