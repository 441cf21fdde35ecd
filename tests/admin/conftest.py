import pytest


@pytest.fixture
def admin_client_for_staff(client, staff_user):
    """The admin as carol, a superuser, who curates memories in her own cubes."""
    client.force_login(staff_user)
    return client
