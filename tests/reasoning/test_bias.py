"""The lexicon bias detector: each type in a clear case and not in neutral text, negation, several biases at
once, evidence quoted from the text, confidence and severity as REFERENCE.md describes."""
import re

import pytest

from apps.reasoning.analysis.bias import BIAS_TYPES, BiasFinding, detect_biases

CLEAR = {
    "confirmation": "Every benchmark I ran confirms what I suspected; the two runs that disagreed must be a fluke.",
    "anchoring": "The vendor's opening price was 90k, so we adjusted down slightly and signed at 85k.",
    "availability": "I still remember that one time a schema change took prod down, so schema changes are "
                    "our biggest risk.",
    "recency": "The last deploy went badly, so the whole release process must be broken.",
    "representativeness": "The new service looks just like the old payments monolith, so it will surely have "
                          "the same outages.",
    "framing": "Presented as a 95% success rate the rollout sounds great, so nobody asked about the other 5%.",
    "sunk_cost": "We've already invested a year in this custom database, so we can't walk away from it now.",
    "attribution": "The release slipped because the backend team is lazy.",
}
NEUTRAL = [
    "The consumer reads 500 messages per batch and commits offsets after each batch.",
    "Let's compare the three designs against the same criteria and pick one on Friday.",
    "We measured p50 and p95 latency over two weeks before and after the change.",
]


def types(text: str, **kwargs) -> list[str]:
    return [finding.type for finding in detect_biases(text, **kwargs)]


def test_the_eight_seed_types_are_described():
    assert set(BIAS_TYPES) == {"confirmation", "anchoring", "availability", "recency", "representativeness",
                               "framing", "sunk_cost", "attribution"}
    assert all(description for description in BIAS_TYPES.values())


@pytest.mark.parametrize("bias_type", sorted(CLEAR))
def test_each_type_is_found_in_a_clear_case(bias_type):
    assert bias_type in types(CLEAR[bias_type])


@pytest.mark.parametrize("text", NEUTRAL)
def test_neutral_reasoning_shows_no_bias(text):
    assert detect_biases(text) == []


def test_empty_text_shows_no_bias():
    assert detect_biases("") == []
    assert detect_biases("   \n") == []


def test_each_clear_case_shows_mainly_its_own_type():
    # The clear example of one type must not be read as most likely another type.
    for bias_type, text in CLEAR.items():
        assert types(text)[0] == bias_type or bias_type in types(text)[:2], (bias_type, types(text))


@pytest.mark.parametrize("negated, plain", [
    ("Nobody anchored on the first estimate this time; we built it bottom-up.",
     "We anchored on the first estimate and only adjusted it a little."),
    ("The team didn't stop because we've already invested so much; we stopped despite the money spent.",
     "We've already invested so much that we can't walk away now."),
    ("He isn't careless; the deploy script had no confirmation step.",
     "The deploy failed because he is careless."),
])
def test_negated_or_guarded_indicators_do_not_count(negated, plain):
    plain_types = set(types(plain))
    assert plain_types, plain
    assert not plain_types & set(types(negated))


def test_seeking_disconfirming_evidence_is_not_confirmation_bias():
    assert "confirmation" not in types("I looked for evidence against my hypothesis and found two runs that "
                                       "contradict it, so I'm less sure now.")
    assert "confirmation" in types("I looked for evidence that supports my hypothesis and found plenty.")


def test_a_text_can_show_several_biases():
    text = ("We've already spent two years on the rewrite, so we can't walk away. All the feedback I've read "
            "confirms I was right, and the one team that objected is just lazy.")
    found = set(types(text))
    assert {"sunk_cost", "confirmation", "attribution"} <= found


def test_evidence_quotes_the_text_and_says_what_it_suggests():
    for text in CLEAR.values():
        for finding in detect_biases(text):
            assert finding.evidence
            for item in finding.evidence:
                quoted = re.match(r'^"(.+)": (.+)$', item)
                assert quoted, item
                assert quoted.group(1) in text  # the exact words of the text, not a canned phrase
                assert quoted.group(2)
            assert all(indicator in text for indicator in finding.indicators)


def test_confidence_follows_the_reference_rule():
    one = detect_biases("We're too far in to stop now.")[0]
    more = detect_biases("We're too far in to stop now; we've already spent so much, and throwing away all "
                         "that work would be a waste of effort.")[0]
    assert one.type == more.type == "sunk_cost"
    assert 0.65 <= one.confidence <= 0.75 + 1e-9
    assert more.confidence > one.confidence
    assert more.confidence <= 0.95
    assert more.severity > one.severity


def test_context_raises_confidence_but_never_creates_evidence():
    text = CLEAR["anchoring"]
    plain = detect_biases(text)[0]
    in_context = detect_biases(text, context="Vendor pricing negotiation")[0]
    assert in_context.confidence > plain.confidence
    assert in_context.evidence == plain.evidence
    assert detect_biases(NEUTRAL[0], context="Vendor pricing negotiation") == []


def test_corrections_are_specific_to_each_type():
    corrections = {finding.type: finding.correction for text in CLEAR.values() for finding in detect_biases(text)}
    assert set(corrections) >= set(CLEAR)
    assert len(set(corrections.values())) == len(corrections)
    assert "disconfirming" in corrections["confirmation"]
    assert "future" in corrections["sunk_cost"]


def test_the_seed_example_gives_the_seed_shape():
    findings = detect_biases("All the data I've seen supports my hypothesis that users prefer feature A",
                             context="Product research analysis")
    assert [finding.type for finding in findings] == ["confirmation"]
    payload = findings[0].as_dict()
    assert set(payload) == {"type", "severity", "evidence", "correction", "confidence"}
    assert 0 < payload["severity"] <= 0.95 and 0.65 <= payload["confidence"] <= 0.95
    assert any("All the data I've seen supports" in item for item in payload["evidence"])


def test_findings_are_frozen_and_ordered_most_likely_first():
    findings = detect_biases(CLEAR["sunk_cost"] + " " + CLEAR["framing"])
    assert len(findings) >= 2
    scores = [finding.confidence * finding.severity for finding in findings]
    assert scores == sorted(scores, reverse=True)
    with pytest.raises(AttributeError):
        findings[0].severity = 1.0  # type: ignore[misc]
    assert isinstance(findings[0], BiasFinding)


def test_a_long_repetitive_text_gives_bounded_evidence():
    text = " ".join([CLEAR["sunk_cost"]] * 400)
    finding = next(finding for finding in detect_biases(text) if finding.type == "sunk_cost")
    assert finding.confidence <= 0.95 and finding.severity <= 0.95
    assert 2 <= len(finding.evidence) <= 12  # a few quotes per indicator, not one per repetition
