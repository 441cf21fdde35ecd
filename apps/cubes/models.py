from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

from apps.core.models import TimeStampedModel

CUBE_ID_PATTERN = r"^[a-zA-Z0-9_-]+$"
cube_id_validator = RegexValidator(CUBE_ID_PATTERN, "A cube id may hold only letters, digits, '_' and '-'.")


class Cube(TimeStampedModel):
    """A named store of memories: the unit of ownership and sharing (MemGOS's memory cube)."""

    id = models.CharField(primary_key=True, max_length=100, validators=[cube_id_validator])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="owned_cubes")
    is_personal = models.BooleanField(default=False, help_text="The owner's default cube.")
    # MemGOS's cube_path, kept as information only: Engram never opens, creates or lists it.
    path = models.CharField(max_length=1000, blank=True, help_text="Informational only; never touched on disk.")
    # Unregistered (soft-deleted): invisible to everyone; only the owner can restore or hard-delete it.
    deleted_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # A system cube (a benchmark's throwaway needles and haystack): in no list, scope or lookup of any edge; only
    # the service that made it sees it, inside apps.cubes.access.hidden_cube_scope.
    hidden = models.BooleanField(default=False, help_text="System cube: shown nowhere, reached only by its service.")

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["owner"], condition=models.Q(is_personal=True),
                                    name="one_personal_cube_per_user"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_unregistered(self) -> bool:
        return self.deleted_at is not None


class CubeMembership(TimeStampedModel):
    """A user's access to a cube that somebody else owns."""

    class Role(models.TextChoices):
        READER = "reader", "Reader"
        WRITER = "writer", "Writer"
        ADMIN = "admin", "Admin"

    cube = models.ForeignKey(Cube, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="cube_memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.READER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cube", "user"], name="one_membership_per_user_and_cube")]

    def __str__(self) -> str:
        return f"{self.user} {self.role} of {self.cube_id}"
