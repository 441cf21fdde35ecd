import pytest

from apps.core.aliases import Aliases
from apps.core.exceptions import InvalidInput, NotFound

ALIASES = Aliases({"primary_sector": "primarySector", "date_start": "dateRange.start", "date_end": "dateRange.end",
                   "date_range": "dateRange", "tags": "metadata.tags", "text": "query", "limit": "top_k"})


def test_arguments_are_renamed_to_the_services_names():
    assert ALIASES.arguments({"primarySector": "semantic", "query": "x", "content": "y"}) == {
        "primary_sector": "semantic", "text": "x", "content": "y"}


@pytest.mark.parametrize(("error", "field", "message"), [
    (InvalidInput("date_start is after date_end: swap them.", field="date_range"), "dateRange",
     "dateRange.start is after dateRange.end: swap them."),
    (InvalidInput("Each of tags has at most 100 characters.", field="tags"), "metadata.tags",
     "Each of metadata.tags has at most 100 characters."),
    (InvalidInput("text has at most 2000 characters.", field="text"), "query", "query has at most 2000 characters."),
    # A plain word that is not the error's subject is prose.
    (InvalidInput("Content is 9 characters long; the limit is 5.", field="content"), "content",
     "Content is 9 characters long; the limit is 5."),
    (InvalidInput("tags[3] is not a label.", field="tags[3]"), "metadata.tags[3]", "metadata.tags[3] is not a label."),
    (NotFound("Memory not found"), None, "Memory not found"),
])
def test_errors_are_reported_in_the_callers_names(error, field, message):
    with pytest.raises(type(error)) as caught, ALIASES.reported():
        raise error
    assert caught.value.extra.get("field") == field
    assert caught.value.message == str(caught.value) == message


def test_a_form_reads_labels():
    message = ALIASES.caller_message("date_start is after date_end: swap them.", field="date_range",
                                     spell={"dateRange.start": "From", "dateRange.end": "To"}.get)
    assert message == "From is after To: swap them."
