"""causal_claims (apps/memories/text.py): the cause and the effect of a sentence, by the phrase that joins them."""
import pytest

from apps.memories.text import CausalClaim, causal_claims


@pytest.mark.parametrize("text, cause, effect", [
    ("The deploy failed because the migration locked the users table.",
     "the migration locked the users table", "The deploy failed"),
    ("Because the migration locked the table, the deploy failed.", "the migration locked the table", "the deploy failed"),
    ("The outage was caused by a full disk on the primary.", "a full disk on the primary", "The outage"),
    ("The office was closed all week due to the holiday season.", "the holiday season", "The office was closed all week"),
    ("Skipping the index review led to a slow search page.", "Skipping the index review", "a slow search page"),
    ("The new index causes slower writes on the events table.", "The new index", "slower writes on the events table"),
    ("The migration locked the users table, so the deploy failed.", "The migration locked the users table",
     "the deploy failed"),
    ("We left early so that we could catch the last train.", "We left early", "we could catch the last train"),
    ("The cache was cold. As a result, the first searches took seconds.", "The cache was cold",
     "the first searches took seconds"),
])
def test_the_phrase_decides_which_clause_is_the_cause(text, cause, effect):
    [claim] = causal_claims(text)
    assert (claim.cause, claim.effect) == (cause, effect)


@pytest.mark.parametrize("text", [
    "I was so happy with the result.",  # "so" as a degree, not a consequence
    "It rained because.",  # nothing on one side
    "Since we moved to Berlin, I cycle to work.",  # "since" is as often temporal: no claim
    "Because of this, it broke.",  # the cause is "this" (one word), with no sentence before to name it
    "We talked about the trip and the weather.",
])
def test_no_claim_without_two_named_sides(text):
    assert causal_claims(text) == []


def test_each_sentence_makes_its_own_claim():
    claims = causal_claims("The disk filled up, so the database stopped. Users left because the app was down.")
    assert claims == [CausalClaim("The disk filled up", "the database stopped", "so"),
                      CausalClaim("the app was down", "Users left", "because")]
