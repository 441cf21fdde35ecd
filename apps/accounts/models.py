import hashlib

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.contrib.postgres.fields import ArrayField
from django.db import models


def token_digest(raw: str) -> str:
    # Tokens carry 256 random bits, so a fast hash is as safe as a slow one and keeps auth O(1).
    return hashlib.sha256(raw.encode()).hexdigest()


def scopes_allow(scopes, needed: str) -> bool:
    """Whether tokens with these scopes may do what needs ``needed``: the admin scope covers all."""
    return needed in scopes or ApiToken.Scope.ADMIN in scopes


class User(AbstractUser):
    """Engram's user. Kept custom from the first migration so that it can grow without pain."""


class ApiToken(models.Model):
    """A bearer token for REST and MCP. Only its SHA-256 digest is stored; the token is shown once."""

    class Scope(models.TextChoices):
        READ = "read", "Read"
        WRITE = "write", "Write"
        ADMIN = "admin", "Admin"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="The first characters of the token, to recognise it.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    scopes = ArrayField(models.CharField(max_length=10, choices=Scope.choices), default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def has_scope(self, scope: str) -> bool:
        return scopes_allow(self.scopes, scope)
