"""Assertions on the REST error envelope: {"error": {"code", "message", "details"}}."""


def assert_error(response, status: int, *, code: str | None = None, field: str | None = None) -> dict:
    """Check the status and the envelope; `field` must be named in details (per-field errors or `field`)."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"]
    error = body["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["message"]
    if code is not None:
        assert error["code"] == code, error
    if field is not None:
        details = error["details"]
        assert details.get("field") == field or field in details, error
    return error
