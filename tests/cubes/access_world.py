"""The cube every access-matrix test starts from (services, REST, MCP): one memory in alice's cube "team",
with a member of each role, a stranger and a staff user who is no member."""
from dataclasses import dataclass, field

from django.utils import timezone

from apps.cubes.models import Cube
from apps.cubes.services import cube_register, cube_share
from apps.memories.models import Memory
from tests.factories import UserFactory

ROLES = ["owner", "admin", "writer", "reader", "stranger", "staff"]


@dataclass
class World:
    cube: Cube
    memory: Memory
    actors: dict
    # Per role: a REST client or an MCP token, for the edge under test.
    callers: dict = field(default_factory=dict)


def build_world(*, owner, staff, store) -> World:
    """dave/erin/bob are the admin/writer/reader members, frank a stranger, ``staff`` (carol) no member;
    hank is one more reader (revoke's target) and gina a user to share with."""
    cube = cube_register(actor=owner, cube_id="team", name="Team")
    actors = {"owner": owner, "staff": staff, "stranger": UserFactory(username="frank")}
    for role, name in (("admin", "dave"), ("writer", "erin"), ("reader", "bob"), (None, "hank")):
        user = UserFactory(username=name)
        if role:
            actors[role] = user
        cube_share(actor=owner, cube_id="team", user=name, role=role or "reader")
    UserFactory(username="gina")
    memory = store(owner, "The team agreed to ship on Fridays only.", cube_id="team")
    return World(cube=cube, memory=memory, actors=actors)


def unregister_first(world: World) -> None:
    Cube.objects.filter(pk=world.cube.pk).update(deleted_at=timezone.now())
