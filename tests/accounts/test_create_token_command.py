from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.accounts.models import ApiToken
from apps.accounts.services import token_authenticate

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    stdout, stderr = StringIO(), StringIO()
    call_command("create_token", *args, stdout=stdout, stderr=stderr)
    return stdout.getvalue(), stderr.getvalue()


def test_prints_only_the_token_on_stdout(user):
    stdout, stderr = run("--user", "alice", "--scopes", "read,write", "--name", "laptop")
    raw = stdout.strip()
    assert stdout.splitlines() == [raw]
    token = token_authenticate(raw=raw)
    assert (token.user, token.name, token.scopes, token.expires_at) == (user, "laptop", ["read", "write"], None)
    assert "cannot be shown again" in stderr and raw not in stderr


def test_user_by_id_default_scopes_and_expiry(user):
    stdout, _ = run("--user", str(user.pk), "--expires-days", "7")
    token = ApiToken.objects.get(user=user)
    assert token.scopes == ["read", "write"]
    assert abs(token.expires_at - (timezone.now() + timedelta(days=7))) < timedelta(minutes=1)
    assert token_authenticate(raw=stdout.strip()) == token


@pytest.mark.parametrize("args, message", [
    (["--user", "nobody"], "No user 'nobody'"),
    (["--user", "alice", "--scopes", "read,sudo"], "Unknown scope sudo"),
    (["--user", "alice", "--scopes", ""], "at least one scope"),
    (["--user", "alice", "--scopes", "admin"], "Only staff"),
    (["--user", "alice", "--expires-days", "0"], "--expires-days"),
    (["--user", "alice", "--name", " "], "Give the token a name"),
])
def test_bad_arguments_are_clear_command_errors(user, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not ApiToken.objects.exists()


def test_staff_may_get_an_admin_token(staff_user):
    stdout, _ = run("--user", "carol", "--scopes", "admin")
    assert token_authenticate(raw=stdout.strip()).scopes == ["admin"]
