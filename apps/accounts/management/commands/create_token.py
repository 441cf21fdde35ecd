"""manage.py create_token --user NAME --scopes read,write: make an API token and print it.

The token is the only thing on stdout, so `TOKEN=$(python manage.py create_token --user alice)` works;
what it is and that it will not be shown again go to stderr."""
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from apps.accounts.selectors import user_resolve
from apps.accounts.services import token_create
from apps.core.exceptions import DomainError


class Command(BaseCommand):
    help = "Create an API token for a user and print it (shown once; only its hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="Username or numeric id of the token's owner.")
        parser.add_argument("--scopes", default="read,write", help="Comma-separated: read, write, admin (staff only).")
        parser.add_argument("--name", default="command line", help="A label to recognise the token by.")
        parser.add_argument("--expires-days", type=int, help="Days until the token expires; never when left out.")

    def handle(self, *args, user, scopes, name, expires_days, **options):
        owner = user_resolve(identifier=user)
        if owner is None:
            raise CommandError(f"No user {user!r}. Create one with `manage.py createsuperuser` or in the admin.")
        if expires_days is not None and expires_days < 1:
            raise CommandError("--expires-days must be 1 or more; leave it out for a token that does not expire.")
        expires_at = timezone.now() + timedelta(days=expires_days) if expires_days else None
        try:
            issued = token_create(actor=owner, name=name, scopes=scopes, expires_at=expires_at)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        expiry = f"expires {issued.token.expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else "never expires"
        self.stderr.write(
            f"Token '{issued.token.name}' for {owner.username} (scopes: {', '.join(issued.token.scopes)}; {expiry}). "
            "Store it now: it cannot be shown again.",
            style_func=self.style.WARNING,
        )
        self.stdout.write(issued.raw)
