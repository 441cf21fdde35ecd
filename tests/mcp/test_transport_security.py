"""DNS-rebinding protection of the MCP edge follows Django's ALLOWED_HOSTS."""
from apps.mcp.asgi import transport_security


def test_allowed_hosts_on_any_port(settings):
    settings.ALLOWED_HOSTS = ["engram.example.com", ".example.org"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://proxy.example.net"]
    security = transport_security()
    assert security.enable_dns_rebinding_protection
    assert security.allowed_hosts == ["engram.example.com", "engram.example.com:*", "example.org", "example.org:*"]
    assert {"https://engram.example.com", "http://engram.example.com:*", "https://proxy.example.net"} <= set(
        security.allowed_origins)


def test_a_wildcard_host_turns_the_check_off(settings):
    settings.ALLOWED_HOSTS = ["*"]
    assert not transport_security().enable_dns_rebinding_protection
