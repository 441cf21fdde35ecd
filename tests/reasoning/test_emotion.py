"""The lexicon emotion detector: polarity, negation, intensifiers, punctuation, discrete emotions, and the
seed's shape."""
import pytest

from apps.reasoning.analysis.emotion import EMOTIONS, detect_emotion

SEED_EXAMPLE = "I'm really excited about this new project! It's going to be amazing!"


def test_the_eleven_seed_emotions():
    assert EMOTIONS == ("joy", "sadness", "anger", "fear", "disgust", "surprise", "pride", "shame", "guilt",
                        "gratitude", "awe")


def test_the_seed_example_reads_as_high_joy_in_the_seed_shape():
    payload = detect_emotion(SEED_EXAMPLE, context="Work communication").as_dict()
    circumplex, discrete = payload["circumplex"], payload["discrete"]
    assert set(circumplex) == {"valence", "arousal", "dominance", "confidence"}
    assert circumplex["valence"] > 0.6 and circumplex["arousal"] > 0.6 and circumplex["dominance"] > 0
    assert discrete["primary"] == "joy"
    assert discrete["emotions"][0] == {"emotion": "joy", "score": discrete["emotions"][0]["score"], "intensity": "high"}
    assert all(set(item) == {"emotion", "score", "intensity"} for item in discrete["emotions"])
    assert all(item["emotion"] in EMOTIONS for item in discrete["emotions"])
    assert 0 < discrete["confidence"] <= 0.95
    assert payload["method"] == "lexicon"
    assert {"excited", "amazing"} <= set(payload["cues"])


def test_include_discrete_false_leaves_out_the_discrete_reading():
    payload = detect_emotion(SEED_EXAMPLE, include_discrete=False).as_dict()
    assert "discrete" not in payload
    assert payload["circumplex"]["valence"] > 0.6


@pytest.mark.parametrize("text", [
    "The migration adds a column and backfills it in batches of 1,000 rows.",
    "Standup moved to 9:45 starting next Monday.",
    "",
])
def test_neutral_text_has_no_emotion(text):
    reading = detect_emotion(text)
    assert abs(reading.valence) < 0.15
    assert reading.arousal < 0.25
    assert reading.primary is None
    assert all(item.score < 0.3 for item in reading.emotions)
    assert reading.as_dict()["discrete"]["primary"] is None


def test_polarity():
    assert detect_emotion("This is a wonderful result, I love it.").valence > 0.4
    assert detect_emotion("This is a terrible result, I hate it.").valence < -0.4


def test_negation_flips_valence():
    plain = detect_emotion("I am happy with the new release.")
    negated = detect_emotion("I am not happy with the new release.")
    assert plain.valence > 0.3
    assert negated.valence < 0
    assert plain.primary == "joy"
    assert negated.primary != "joy"
    worried = detect_emotion("I'm worried about the launch.")
    not_worried = detect_emotion("I'm not worried about the launch.")
    assert worried.primary == "fear"
    assert not_worried.primary != "fear"
    assert not_worried.valence > worried.valence


def test_intensifiers_raise_arousal_and_valence_and_dampeners_lower_them():
    plain = detect_emotion("The team is happy with the result.")
    boosted = detect_emotion("The team is extremely happy with the result.")
    damped = detect_emotion("The team is slightly happy with the result.")
    assert boosted.arousal > plain.arousal > damped.arousal
    assert boosted.valence > plain.valence > damped.valence


def test_exclamation_marks_raise_arousal():
    calm = detect_emotion("The demo went well and we are glad.")
    loud = detect_emotion("The demo went well and we are glad!!!")
    assert loud.arousal > calm.arousal
    assert loud.valence > calm.valence


def test_emoticons_carry_valence():
    assert detect_emotion("deploy is done :)").valence > 0.15
    assert detect_emotion("deploy is done :(").valence < -0.15


@pytest.mark.parametrize("text, emotion", [
    ("I'm furious that the vendor broke our integration without telling anyone.", "anger"),
    ("I'm scared the failover won't work when we need it.", "fear"),
    ("It's so sad that the team is being split up.", "sadness"),
    ("Their spam-everyone growth tactics are disgusting.", "disgust"),
    ("Wow, I did not expect the cache to make such a difference!", "surprise"),
    ("I'm proud of how the team handled the incident.", "pride"),
    ("I'm embarrassed that I demoed the wrong branch to the customer.", "shame"),
    ("It was my fault the backup job was never scheduled; I feel terrible about it.", "guilt"),
    ("Thank you so much for reviewing my patch over the weekend!", "gratitude"),
    ("Standing under the telescope I was in awe of the night sky.", "awe"),
    ("We finally launched and I'm delighted!", "joy"),
])
def test_clear_cases_name_the_primary_emotion(text, emotion):
    reading = detect_emotion(text)
    assert reading.primary == emotion
    assert reading.emotions[0].emotion == emotion


def test_dominance_separates_anger_from_fear():
    assert detect_emotion("I'm furious and I won't accept this.").dominance > detect_emotion(
        "I'm terrified and helpless about this.").dominance


def test_intensity_labels_follow_the_score():
    reading = detect_emotion(SEED_EXAMPLE)
    for item in reading.emotions:
        expected = "high" if item.score >= 0.7 else "moderate" if item.score >= 0.4 else "low"
        assert item.intensity == expected


def test_confidence_grows_with_coverage():
    thin = detect_emotion("The quarterly capacity planning spreadsheet for the storage cluster is nice.")
    thick = detect_emotion("I'm thrilled, delighted and so happy with this!")
    assert thick.confidence > thin.confidence
    assert 0 < thin.confidence < thick.confidence <= 0.95


def test_context_nudges_the_discrete_reading_only():
    text = "Well, that was something."
    plain, in_context = detect_emotion(text), detect_emotion(text, context="a terrifying outage")
    assert (plain.valence, plain.arousal, plain.dominance) == (in_context.valence, in_context.arousal,
                                                                 in_context.dominance)
    fear = {item.emotion: item.score for item in in_context.emotions}.get("fear", 0.0)
    assert fear > {item.emotion: item.score for item in plain.emotions}.get("fear", 0.0)


def test_ranges():
    for text in [SEED_EXAMPLE, "NO NO NO this is AWFUL!!!!", "meh", "I'm not not happy"]:
        circumplex = detect_emotion(text).as_dict()["circumplex"]
        assert -1 <= circumplex["valence"] <= 1
        assert 0 <= circumplex["arousal"] <= 1
        assert -1 <= circumplex["dominance"] <= 1
        assert 0 <= circumplex["confidence"] <= 0.95
