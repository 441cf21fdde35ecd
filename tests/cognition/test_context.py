"""inject_context's service and hydrate_citation's selector, on the real graph and model: the token budget (one
counter, never exceeded, at its lower bound too), the distillation modes, citation tags, conflicts and their inbox
task, tool gating, priority pools, the 1-hop expansion, bundles, sessions and isolation."""
from __future__ import annotations

import re
import uuid

import pytest

from apps.cognition import conflicts
from apps.cognition.citations import citation_tag
from apps.cognition.limits import AUTO_RAW_TOKENS, CONTEXT_POOL
from apps.cognition.models import CgSession, CurationTask, NodeProfile, SessionItem
from apps.cognition.selectors.citations import citation_hydrate
from apps.cognition.services.context import context_inject
from apps.core.exceptions import InvalidInput, NotFound
from apps.memories.embeddings import clip_to_tokens, count_text_tokens
from apps.memories.services import memory_delete, memory_store_many
from apps.memories.services.curation import memory_link

pytestmark = pytest.mark.django_db

TAG = re.compile(r"\[node_[0-9a-f]{12}\]")
# 60 tokens each ("apple" and "pear" are one token of the model's vocabulary); no sentence ends, so each node is one
# passage when distilled.
APPLES = " ".join(["apple"] * 60)
PEARS = " ".join(["pear"] * 60)
DEPLOY_NOTES = [
    "Deployments run from the release branch. The pipeline builds the image first. Then it runs the migrations. "
    "Finally the new pods replace the old ones one at a time, so users never see downtime.",
    "The deployment pipeline needs the registry token. It reads it from the vault at build time. Rotating the token "
    "means restarting the runners. Nobody should paste the token into the pipeline settings.",
    "A failed deployment rolls back by itself. The previous image stays tagged as stable. Rollbacks keep the "
    "database as it is, so migrations must be backwards compatible for one release.",
]
CODE_NOTE = ("To deploy by hand, run the release script from the repository root. It asks for the version.\n"
             "```bash\n./scripts/release.sh --version 2.4.1 --target production\n```\n"
             "Check the dashboard afterwards. The health endpoint must answer within a minute.")


def stored(user, *contents, link=False):
    """Memories stored in one batch, without automatic links unless asked (so tests choose the graph)."""
    results = memory_store_many(actor=user, items=[{"content": content} for content in contents], link=link)
    return [result.memory for result in results]


def inject(user, query, **arguments):
    return context_inject(actor=user, query=query, **arguments)


def counted(text: str) -> int:
    [tokens] = count_text_tokens([text])
    return tokens


# --- the token counter and the text checks (no database) -------------------------------------------------------------

def test_the_counter_counts_whole_texts_and_cuts_between_words():
    text = "Unbelievable things happen: PostgreSQL 16.2 isn't MySQL. " * 40
    [whole] = count_text_tokens([text])
    assert whole > 256  # the model reads at most 256 tokens; a budget counts them all
    assert count_text_tokens([text, text + "\n\n" + text]) == [whole, 2 * whole]  # blocks joined by space add up
    for limit in (1, 7, 50, 299):
        clipped = clip_to_tokens(text, limit)
        assert counted(clipped) <= limit and text.startswith(clipped)
        assert clipped == "" or text[len(clipped)] in " .:'"  # never inside a word
    assert clip_to_tokens(text, whole) == text


@pytest.mark.parametrize("a, b, reason, topic", [
    ("Library X uses version 2.1 in production.", "Library X uses version 3.0 in production.", "numbers",
     "library x uses version"),
    ("The API supports pagination.", "The API does not support pagination.", "negation", "api pagination"),
    ("Use PostgreSQL 15 with a timeout of 30 seconds.", "Use PostgreSQL 15 with a timeout of 60 seconds.",
     "numbers", "use postgresql timeout seconds"),
])
def test_texts_clash_by_negation_or_numbers_after_the_same_word(a, b, reason, topic):
    assert conflicts.clash(a, b) == conflicts.Clash(reason, topic)


def test_the_same_numbers_or_other_words_do_not_clash():
    assert conflicts.clash("Station 3 was checked.", "Station 3 was checked twice.") is None
    assert conflicts.clash("Port 80 is open.", "Release 81 shipped.") is None


# --- the token budget ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "raw", "narrative", "structured", "code_focused"])
@pytest.mark.parametrize("verbosity", [0, 1, 2])
def test_the_budget_is_never_exceeded_at_the_least_max_tokens(user, mode, verbosity):
    stored(user, *DEPLOY_NOTES, CODE_NOTE)
    result = inject(user, "how do deployments work", max_tokens=100, distillation_mode=mode,
                    verbosity_level=verbosity)
    assert result.distilled.tokens_used == counted(result.distilled.text) <= 100
    assert result.distilled.tokens_used > 0
    if verbosity < 2:  # before distillation: every node's raw block (its tag and content), counted alone
        blocks = [f"{citation_tag(node.node_id)} {node.content}" if verbosity else node.content
                  for node in result.nodes]
        assert result.distilled.tokens_before == sum(counted(block) for block in blocks)


def test_raw_fills_the_budget_to_the_token_and_the_ratio_is_the_share_saved(user):
    apples, pears = stored(user, APPLES, PEARS)
    result = inject(user, "apple", max_tokens=100, distillation_mode="raw", verbosity_level=0)
    # 60 + 60 tokens before; the apples whole (60) and the pears cut to the 40 tokens left.
    assert [node.node_id for node in result.nodes] == [str(apples.pk), str(pears.pk)]
    assert result.distilled.text == APPLES + "\n\n" + " ".join(["pear"] * 40)
    assert (result.distilled.tokens_before, result.distilled.tokens_used) == (120, 100)
    assert result.distilled.applied == "none"
    assert result.distilled.compression_ratio == 0.1667  # 1 - 100/120


def test_structured_keeps_the_best_passages_within_the_distilled_budget(user):
    stored(user, APPLES, PEARS)
    result = inject(user, "apple", distillation_mode="structured", verbosity_level=0)
    # Budget: max(ceil(0.5 x 120), min(120, 100)) = 100 tokens. "- " + apples = 61 fits; the pears (61 more) do not.
    assert result.distilled.text == "- " + APPLES
    assert (result.distilled.tokens_before, result.distilled.tokens_used) == (120, 61)
    assert result.distilled.compression_ratio == 0.4917  # 1 - 61/120


def test_a_sentence_longer_than_the_budget_is_cut_rather_than_dropped(user):
    [apples] = stored(user, " ".join(["apple"] * 300))
    result = inject(user, "apple", max_tokens=100, distillation_mode="structured")
    # "- " (1 token), the tag (its hex splits into 12 or so tokens) and as many apples as the rest allows.
    tag = citation_tag(apples.pk)
    assert result.distilled.text == f"- {' '.join(['apple'] * (100 - 1 - counted(tag)))} {tag}"
    assert result.distilled.tokens_used == 100


def test_auto_stays_raw_up_to_2048_tokens_and_distills_above(user):
    stored(user, *DEPLOY_NOTES)
    small = inject(user, "how do deployments work")
    assert small.distilled.applied == "none" and small.distilled.compression_ratio == 0.0
    assert small.distilled.tokens_used == small.distilled.tokens_before <= AUTO_RAW_TOKENS
    for note in DEPLOY_NOTES:
        assert note in small.distilled.text

    # Ten notes of about 300 tokens each: over 2048 raw, so auto distills (structured) to at most half.
    step = "Runbook {topic} step {n}: check the {topic} service logs and restart it."
    long_notes = [" ".join(step.format(topic=topic, n=n) for n in range(20))
                  for topic in ("billing", "search", "login", "upload", "email", "export", "import", "report",
                                "backup", "cache")]
    stored(user, *long_notes)
    large = inject(user, "runbook steps for restarting services", max_tokens=4000, priority="normal")
    assert large.distilled.tokens_before > AUTO_RAW_TOKENS
    assert large.distilled.applied == "structured"
    used, before = large.distilled.tokens_used, large.distilled.tokens_before
    assert used <= -(-before // 2)
    assert large.distilled.compression_ratio == round(1 - used / before, 4)
    assert all(line.startswith("- ") for line in large.distilled.text.splitlines() if line)


def test_auto_distills_when_the_raw_text_does_not_fit_max_tokens(user):
    stored(user, *DEPLOY_NOTES)
    result = inject(user, "how do deployments work", max_tokens=100)
    assert result.distilled.tokens_before > 100
    assert result.distilled.applied == "structured" and result.distilled.tokens_used <= 100


# --- modes, tags, verbosity ------------------------------------------------------------------------------------------

def test_code_focused_keeps_code_blocks_verbatim(user):
    stored(user, CODE_NOTE, *DEPLOY_NOTES)
    result = inject(user, "how to deploy by hand with the release script", distillation_mode="code_focused",
                    max_tokens=120)
    assert result.distilled.applied == "code_focused"
    assert "```bash\n./scripts/release.sh --version 2.4.1 --target production\n```" in result.distilled.text
    assert result.distilled.tokens_used <= 120


def test_narrative_writes_paragraphs_ending_with_their_tag_and_structured_a_bullet_per_sentence(user):
    notes = stored(user, *DEPLOY_NOTES)
    tags = {citation_tag(note.pk) for note in notes}
    narrative = inject(user, "deployment rollback and registry token", distillation_mode="narrative")
    paragraphs = narrative.distilled.text.split("\n\n")
    assert paragraphs and all(TAG.fullmatch(paragraph.rsplit(" ", 1)[-1]) for paragraph in paragraphs)
    assert not any(line.startswith("- ") for line in narrative.distilled.text.splitlines())
    structured = inject(user, "deployment rollback and registry token", distillation_mode="structured")
    lines = [line for line in structured.distilled.text.splitlines() if line]
    assert all(line.startswith("- ") and line.rsplit(" ", 1)[-1] in tags for line in lines)
    # Extractive: every bullet is a sentence of a note, as written.
    sentences = {sentence for note in DEPLOY_NOTES for sentence in re.split(r"(?<=[.!?])\s+", note)}
    assert all(line[2:].rsplit(" ", 1)[0] in sentences for line in lines)


def test_citation_tags_name_the_nodes_by_their_first_twelve_hex_digits(user):
    notes = stored(user, *DEPLOY_NOTES)
    result = inject(user, "how do deployments work", distillation_mode="raw")
    for note in notes:
        assert f"[node_{note.pk.hex[:12]}] {note.content}" in result.distilled.text
    assert set(TAG.findall(result.distilled.text)) == {citation_tag(node.node_id) for node in result.nodes}


def test_verbosity_zero_is_text_only_and_two_adds_insights(user):
    first, second, _ = stored(user, *DEPLOY_NOTES)
    memory_link(actor=user, source_id=first.pk, target_id=second.pk, link_type="causal", weight=0.8)
    bare = inject(user, "how do deployments work", distillation_mode="raw", verbosity_level=0)
    assert "[node_" not in bare.distilled.text and "importance" not in bare.distilled.text
    full = inject(user, "how do deployments work", distillation_mode="raw", verbosity_level=2)
    assert f"causal -> {citation_tag(second.pk)} 0.80" in full.distilled.text
    assert f"causal <- {citation_tag(first.pk)} 0.80" in full.distilled.text
    assert "(importance 0.50; delta S n/a;" in full.distilled.text
    NodeProfile.objects.create(memory=first, delta_s=0.42)
    profiled = inject(user, "how do deployments work", distillation_mode="raw", verbosity_level=2)
    assert "(importance 0.50; delta S 0.42; 1 link: causal -> " in profiled.distilled.text


# --- retrieval: pools, expansion, isolation --------------------------------------------------------------------------

@pytest.mark.parametrize("priority", ["low", "normal", "high"])
def test_priority_sizes_the_retrieved_pool(user, priority):
    stored(user, *[f"Note {word}: the team met about the {word} roadmap and agreed on next steps."
                   for word in ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                                "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
                                "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee")])
    result = inject(user, "roadmap meeting notes", priority=priority)
    assert len(result.nodes) == CONTEXT_POOL[priority]


def test_the_one_hop_expansion_adds_linked_live_neighbours(user):
    relevant = stored(user, *[f"The {colour} kayak needs a new paddle before the lake trip." for colour in
                              ("red", "blue", "green", "yellow", "orange", "purple")])
    unrelated, deleted = stored(user, "Invoices are due on the first Monday of each month.",
                                "The office plants are watered on Thursdays.")
    best = relevant[0]
    memory_link(actor=user, source_id=best.pk, target_id=unrelated.pk, weight=0.5)
    memory_link(actor=user, source_id=deleted.pk, target_id=best.pk, weight=0.9)
    memory_delete(actor=user, memory_id=deleted.pk)
    result = inject(user, "red kayak paddle for the lake trip", priority="low")
    ids = [node.node_id for node in result.nodes]
    assert str(unrelated.pk) in ids and str(deleted.pk) not in ids
    seed = next(node for node in result.nodes if node.node_id == str(best.pk))
    neighbour = next(node for node in result.nodes if node.node_id == str(unrelated.pk))
    assert neighbour.score == pytest.approx(seed.score * 0.5, abs=1e-5)
    assert len(ids) <= 2 * CONTEXT_POOL["low"]


def test_another_users_nodes_and_session_stay_out(user, other_user):
    mine = stored(user, "My deploy key lives in the team vault.")
    theirs = stored(other_user, "Bob's deploy key lives in his own vault.")
    result = inject(user, "where does the deploy key live")
    assert [node.node_id for node in result.nodes] == [str(mine[0].pk)]
    assert str(theirs[0].pk) not in result.distilled.text
    with pytest.raises(NotFound) as refused:
        inject(other_user, "deploy key", session_id=str(result.session.pk))
    assert refused.value.code == "session_not_found"


# --- session, UTL, gating --------------------------------------------------------------------------------------------

def test_the_query_is_recorded_in_the_session_with_the_nodes_it_activated(user):
    notes = stored(user, *DEPLOY_NOTES)
    NodeProfile.objects.create(memory=notes[0])
    session_id = str(uuid.uuid4())
    result = inject(user, DEPLOY_NOTES[0], session_id=session_id)
    session = CgSession.objects.get(pk=session_id, owner=user)
    item = SessionItem.objects.get(session=session)
    assert item.kind == "query" and item.text == DEPLOY_NOTES[0]
    assert item.activated == [{"node_id": node.node_id, "score": round(node.score, 6)} for node in result.nodes]
    data = result.as_dict()
    assert data["session_id"] == session_id
    assert data["utl_metrics"] == {"entropy": round(session.entropy, 4), "coherence": round(session.coherence, 4),
                                   "learning_score": round(session.learning_score, 4)}
    # The query is a stored note: nearly no surprise, so entropy is low and nothing is gated.
    assert session.entropy < 0.2 and data["tool_gating_warning"]["triggered"] is False
    assert NodeProfile.objects.get(memory=notes[0]).activations == 1


def test_high_entropy_gates_the_answer(user):
    result = inject(user, "what did we decide about the quarterly offsite")  # an empty graph: surprise 1.0
    warning = result.as_dict()["tool_gating_warning"]
    assert result.recorded.entropy == 1.0
    assert warning == {
        "triggered": True, "entropy_score": 1.0, "auto_retry_after": False,
        "suggested_tools": ["generate_search_plan", "epistemic_action", "expand_causal_path"],
        "message": "Retrieval quality may be low due to high entropy (1.00). Suggest calling epistemic_action first "
                   "to reduce entropy before retrying."}
    assert result.distilled.text == "" and result.distilled.tokens_used == 0


# --- conflicts -------------------------------------------------------------------------------------------------------

def test_different_numbers_for_the_same_words_conflict_and_open_one_task(user):
    old, new = stored(user, "The payments service stores its data in PostgreSQL 15.",
                      "The payments service stores its data in PostgreSQL 16.")
    memory_link(actor=user, source_id=old.pk, target_id=new.pk)  # linked, yet they contradict each other
    result = inject(user, "which PostgreSQL does the payments service use")
    alert = result.as_dict()["conflict_alert"]
    assert alert["has_conflict"] is True
    assert set(alert["conflicting_nodes"]) == {str(old.pk), str(new.pk)}
    assert "postgresql" in alert["topic"] and alert["suggested_action"] == "ask_user"
    assert alert["message"].startswith(f"Warning: Found conflicting memories about [{alert['topic']}].")
    task = CurationTask.objects.get(owner=user)
    assert (task.task_type, task.status, task.suggested_tool) == ("ambiguity_detected", "open", "annotate_node")
    assert sorted(map(str, task.node_ids)) == sorted([str(old.pk), str(new.pk)])
    inject(user, "which PostgreSQL does the payments service use")
    assert CurationTask.objects.filter(owner=user).count() == 1  # one open task per node set


def test_a_negation_in_one_only_conflicts(user):
    stored(user, "The public API supports cursor pagination on every list endpoint.",
           "The public API does not support cursor pagination on every list endpoint.")
    alert = inject(user, "does the public API support cursor pagination").as_dict()["conflict_alert"]
    assert alert["has_conflict"] is True and alert["suggested_action"] == "ask_user"


def test_similar_nodes_conflict_only_when_no_short_path_joins_them(user):
    first, second = stored(user, "The user prefers dark mode in every code editor.",
                           "In every code editor the user prefers dark mode.")
    query = "does the user prefer dark mode in code editors"
    alert = inject(user, query).as_dict()["conflict_alert"]
    assert alert["has_conflict"] is True and alert["suggested_action"] == "merge_concepts"
    assert CurationTask.objects.get(owner=user).suggested_tool == "merge_concepts"
    # Two links through a third node are a path of 2: no longer a conflict.
    [middle] = stored(user, "Editor themes are configured in the settings sync file.")
    memory_link(actor=user, source_id=first.pk, target_id=middle.pk)
    memory_link(actor=user, source_id=second.pk, target_id=middle.pk)
    assert inject(user, query).as_dict()["conflict_alert"] == {
        "has_conflict": False, "conflicting_nodes": [], "topic": "", "suggested_action": "ignore",
        "message": "No conflicting memories among the retrieved nodes."}


def test_unrelated_nodes_do_not_conflict(user):
    stored(user, *DEPLOY_NOTES)
    assert inject(user, "how do deployments work").conflicts == []
    assert not CurationTask.objects.exists()


# --- bundles ---------------------------------------------------------------------------------------------------------

def test_only_the_metadata_asked_for_is_bundled(user):
    cause, effect, further, general = stored(
        user, "The cache was disabled during the migration.", "Because the cache was disabled, pages loaded slowly.",
        "Slow pages made customers open support tickets.", "A cache is a kind of storage layer.")
    memory_link(actor=user, source_id=cause.pk, target_id=effect.pk, link_type="causal", weight=0.9)
    memory_link(actor=user, source_id=effect.pk, target_id=further.pk, link_type="causal", weight=0.5)
    memory_link(actor=user, source_id=cause.pk, target_id=general.pk, link_type="hierarchical", weight=0.7)
    plain = inject(user, "why were pages slow after the migration").as_dict()
    assert "bundled_metadata" not in plain
    only = inject(user, "why were pages slow", include_metadata=["causal_links"]).as_dict()["bundled_metadata"]
    assert list(only) == ["causal_links"]
    everything = inject(user, "why were pages slow after the cache change",
                        include_metadata=["neighborhood", "causal_links", "entailment_cones", "conflicts"]
                        ).as_dict()["bundled_metadata"]
    assert set(everything) == {"neighborhood", "causal_links", "entailment_cones", "conflicts"}
    chain = [str(cause.pk), str(effect.pk), str(further.pk)]
    assert everything["causal_links"][0]["nodes"] == chain
    assert everything["causal_links"][0]["strength"] == 0.45
    cone = next(cone for cone in everything["entailment_cones"] if cone["apex"] == str(cause.pk))
    assert cone["ancestors"] == [str(general.pk)] and cone["descendants"] == []
    neighbourhood = everything["neighborhood"]
    assert {node["node_id"] for node in neighbourhood["nodes"]} >= set(chain)
    assert {(edge["source"], edge["target"]) for edge in neighbourhood["edges"]} >= {
        (str(cause.pk), str(effect.pk)), (str(effect.pk), str(further.pk))}


# --- arguments -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("arguments, field", [
    ({"query": "  "}, "query"),
    ({"query": "x" * 4097}, "query"),
    ({"query": "x", "max_tokens": 99}, "max_tokens"),
    ({"query": "x", "max_tokens": 8193}, "max_tokens"),
    ({"query": "x", "priority": "urgent"}, "priority"),
    ({"query": "x", "distillation_mode": "summary"}, "distillation_mode"),
    ({"query": "x", "include_metadata": ["conflicts", "history"]}, "include_metadata[1]"),
    ({"query": "x", "verbosity_level": 3}, "verbosity_level"),
    ({"query": "x", "session_id": "yesterday"}, "session_id"),
])
def test_bad_arguments_name_their_field(user, arguments, field):
    with pytest.raises(InvalidInput) as refused:
        context_inject(actor=user, **arguments)
    assert refused.value.field == field


# --- hydrate_citation ------------------------------------------------------------------------------------------------

def test_hydrate_expands_tags_to_raw_content_by_verbosity(user, other_user):
    first, second, third = stored(user, *DEPLOY_NOTES)
    memory_link(actor=user, source_id=first.pk, target_id=second.pk, link_type="causal", weight=0.6)
    context = inject(user, "how do deployments work", distillation_mode="raw").distilled.text
    tag = citation_tag(first.pk)
    assert tag in context
    [bare] = citation_hydrate(actor=user, citation_tags=[tag], verbosity_level=0)
    assert bare == {"citation_tag": tag, "raw_content": DEPLOY_NOTES[0], "metadata": {"node_id": str(first.pk)},
                    "neighbours": []}
    [normal] = citation_hydrate(actor=user, citation_tags=[tag.strip("[]")])
    assert {"kind", "cube_id", "created_at", "importance", "tags"} <= set(normal["metadata"])
    [full] = citation_hydrate(actor=user, citation_tags=[tag], verbosity_level=2, include_neighbors=True)
    assert full["metadata"]["profile"] is None and full["metadata"]["annotations"] == []
    assert full["neighbours"] == [{"node_id": str(second.pk), "citation_tag": citation_tag(second.pk),
                                   "content": DEPLOY_NOTES[1][:200], "kind": "memory", "edge_type": "causal",
                                   "weight": 0.6, "direction": "outgoing"}]
    # Someone else's node is not found, under the index of the tag that named it.
    with pytest.raises(NotFound) as hidden:
        citation_hydrate(actor=other_user, citation_tags=[citation_tag(third.pk)])
    assert hidden.value.extra["field"] == "citation_tags[0]"
    memory_delete(actor=user, memory_id=third.pk)
    with pytest.raises(NotFound) as forgotten:
        citation_hydrate(actor=user, citation_tags=[tag, citation_tag(third.pk)])
    assert forgotten.value.extra["field"] == "citation_tags[1]"


@pytest.mark.parametrize("tags, field", [
    ([], "citation_tags"), (["[node_0123456789ab]"] * 11, "citation_tags"), ("[node_0123456789ab]", "citation_tags"),
    (["[node_0123456789ab]", "node-xyz"], "citation_tags[1]"),
])
def test_hydrate_refuses_what_is_no_list_of_tags(user, tags, field):
    with pytest.raises(InvalidInput) as refused:
        citation_hydrate(actor=user, citation_tags=tags)
    assert refused.value.field == field
