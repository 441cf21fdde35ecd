"""`manage.py embedded_postgres {status,stop}`: look after the embedded PostgreSQL under var/."""
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.core import embedded_postgres


class Command(BaseCommand):
    help = "Show whether the embedded PostgreSQL runs, or stop it (it keeps running between `make run`s)."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, action: str, **options):
        if not settings.EMBEDDED_DATABASE:
            raise CommandError(
                "DATABASE_URL is set, so Engram uses that external PostgreSQL and runs no embedded one: "
                "manage it with its own tools, or unset DATABASE_URL."
            )
        if action == "status":
            self._status()
        elif embedded_postgres.stop(settings.VAR_DIR):
            self.stdout.write(self.style.SUCCESS("Stopped the embedded PostgreSQL."))
        else:
            self.stdout.write("The embedded PostgreSQL was not running.")

    def _status(self) -> None:
        server = embedded_postgres.status(settings.VAR_DIR)
        if server is None:
            self.stdout.write(f"The embedded PostgreSQL is not running (data: {settings.VAR_DIR / 'pgdata'}).")
            return
        self.stdout.write(
            f"The embedded PostgreSQL is running: pid {server.pid}, socket dir {server.socket_dir}, "
            f"data {server.pgdata}."
        )
