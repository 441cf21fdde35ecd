"""Fixtures of the Mind tests: a project for alice (`user`) and one for bob (`other_user`), made through
the service, so they sit in each owner's personal cube like any project an agent creates."""
import pytest

from apps.projects.services import project_create


@pytest.fixture
def project(user):
    """alice's project "spawner": personal cube, status active, goal "Implement memory MCP", no stack."""
    return project_create(actor=user, name="spawner", current_goal="Implement memory MCP")


@pytest.fixture
def other_project(other_user):
    """bob's project "spawner" too: same name, other owner."""
    return project_create(actor=other_user, name="spawner")


@pytest.fixture
def export_dir(settings, tmp_path):
    """Exports of this test go to a folder of its own."""
    settings.ENGRAM_EXPORT_DIR = tmp_path / "exports"
    return settings.ENGRAM_EXPORT_DIR
