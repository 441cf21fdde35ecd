"""`manage.py mcp_stdio --profile thoughtmcp --token T`: one MCP profile over stdio (desktop clients).

The token is checked once, at start; the session then acts as its user with its scopes, exactly as
over HTTP. Standard output carries only MCP messages: logs go to standard error.
"""
from __future__ import annotations

import os

import anyio
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from apps.mcp.auth import authenticate_token, authenticated
from apps.mcp.profiles import PROFILES
from apps.mcp.server import build_server

TOKEN_ENV = "ENGRAM_TOKEN"


class Command(BaseCommand):
    help = "Serve one MCP profile over stdio, authenticated by an Engram API token."

    def add_arguments(self, parser):
        parser.add_argument("--profile", required=True, choices=sorted(PROFILES), help="The profile to serve.")
        parser.add_argument(
            "--token", default=os.environ.get(TOKEN_ENV),
            help=f"An Engram API token (default: ${TOKEN_ENV}, which keeps it out of the process list).",
        )

    def handle(self, *args, profile: str, token: str | None, **options):
        if not token:
            raise CommandError(f"Give an Engram API token with --token or ${TOKEN_ENV}.")
        access_token = authenticate_token(token)
        if access_token is None:
            raise CommandError("The token is invalid, expired or revoked: create a new one in the dashboard or "
                               "with `manage.py create_token`.")
        server = build_server(PROFILES[profile])
        # Tools use connections of their own (run_sync, apps/core/threads.py); this one would only sit idle.
        connections.close_all()
        with authenticated(access_token):
            anyio.run(server.run_stdio_async)
