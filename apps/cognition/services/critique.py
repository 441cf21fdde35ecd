"""critique_context: a reasoning summary checked against the actor's own graph, sentence by sentence; no model writes
or judges anything.

Each sentence of the summary (and each side of its causal claim, apps/memories/text.causal_claims) is embedded in one model
call. A sentence meets its CRITIQUE_NEIGHBOURS nearest live, unquarantined nodes of the cubes the actor may read,
and the focal nodes, when their cosine reaches CRITIQUE_RELATED_COSINE (below it they are not about the same thing).
A finding, scored in [0, 1], is a contradiction when its score reaches ``contradiction_threshold``:
- negation / numbers: conflicts.clash of the sentence and the node (a negation in one only; a different number,
  version or date after the same word). Score = their cosine.
- correction: the node carries a correction note (an Annotation of type correction). Score = cosine when the sentence
  clashes with the correction too, else cosine x CORRECTION_UNCONFIRMED (it may say what the correction says).
- superseded_decision: the node is a decision that a later decision superseded. Score = cosine.
- reversed_causal_edge: the sentence claims A causes B (each side resolved to its nearest node at
  CLAIM_RESOLVE_COSINE) where the graph has a causal link B -> A and none A -> B. Score = the lower side cosine.
Gaps: the checks are word rules and links, not entailment; a contradiction phrased without a negation or a number,
and one against a node that is not among a sentence's nearest, go unseen.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from apps.accounts.models import User
from apps.cognition import conflicts
from apps.cognition.limits import (
    CLAIM_RESOLVE_COSINE, CONTRADICTION_THRESHOLD, CONTRADICTION_THRESHOLD_DEFAULT, CORRECTION_UNCONFIRMED,
    CRITIQUE_FINDINGS, CRITIQUE_FOCAL_NODES, CRITIQUE_NEIGHBOURS, CRITIQUE_RELATED_COSINE, CRITIQUE_SENTENCES,
    CRITIQUE_SUMMARY_MAX_CHARS, CRITIQUE_SUMMARY_MIN_CHARS,
)
from apps.cognition.models import Annotation
from apps.cognition.selectors.immune import causal_links, live_nodes, nearest_nodes, readable_cube_ids
from apps.core.exceptions import InvalidInput
from apps.core.validation import refuse_unstorable_text
from apps.memories.embeddings import embed_texts
from apps.memories.models import Memory, MemoryVector
from apps.memories.selectors import memory_ids_readable
from apps.memories.text import causal_claims
from apps.projects.models import Decision

KINDS = ("negation", "numbers", "correction", "superseded_decision", "reversed_causal_edge")
METHOD = ("Sentences embedded with MiniLM and compared with their nearest nodes of your graph; contradictions by "
          "rules (negation, number/version/date clash, correction notes, superseded decisions, reversed causal "
          "links); no language model.")
# Characters of a node's content an answer quotes.
QUOTE_CHARS = 300
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class CritiqueFinding:
    sentence_index: int
    sentence: str
    kind: str
    node_id: str
    node_content: str
    score: float
    explanation: str
    evidence: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"sentence_index": self.sentence_index, "sentence": self.sentence, "kind": self.kind,
                "node_id": self.node_id, "node_content": self.node_content[:QUOTE_CHARS],
                "score": round(self.score, 4), "explanation": self.explanation, "evidence": self.evidence}


@dataclass(frozen=True)
class Critique:
    sentences: list[str]
    # Each sentence's related nodes: (node id, cosine), best first.
    nearest: list[list[tuple[str, float]]]
    contradictions: list[CritiqueFinding]
    below_threshold: int
    threshold: float

    def as_dict(self) -> dict:
        return {
            "consistent": not self.contradictions,
            "contradictions": [finding.as_dict() for finding in self.contradictions],
            "contradiction_count": len(self.contradictions), "below_threshold": self.below_threshold,
            "contradiction_threshold": self.threshold,
            "sentences": [{"index": index, "text": text, "nearest_nodes": [
                {"node_id": node, "similarity": round(cosine, 4)} for node, cosine in self.nearest[index]]}
                for index, text in enumerate(self.sentences)],
            "method": METHOD,
        }


def _clean_summary(value) -> str:
    if not isinstance(value, str):
        raise InvalidInput("reasoning_summary must be a string: the reasoning to check.", field="reasoning_summary")
    refuse_unstorable_text(value, "reasoning_summary")
    value = value.strip()
    if not CRITIQUE_SUMMARY_MIN_CHARS <= len(value) <= CRITIQUE_SUMMARY_MAX_CHARS:
        raise InvalidInput(f"reasoning_summary has {len(value)} characters; write {CRITIQUE_SUMMARY_MIN_CHARS} to "
                           f"{CRITIQUE_SUMMARY_MAX_CHARS}: the claims of your reasoning, in sentences.",
                           field="reasoning_summary")
    return value


def _clean_focal(actor: User, focal_nodes) -> list[str]:
    if focal_nodes is None:
        return []
    if isinstance(focal_nodes, list) and len(focal_nodes) > CRITIQUE_FOCAL_NODES:
        raise InvalidInput(f"focal_nodes has {len(focal_nodes)} ids; at most {CRITIQUE_FOCAL_NODES}.",
                           field="focal_nodes")
    return list(dict.fromkeys(memory_ids_readable(actor=actor, memory_ids=focal_nodes, field="focal_nodes")))


def critique_context(*, actor: User, reasoning_summary, focal_nodes=None, contradiction_threshold=None) -> Critique:
    """The contradictions between ``reasoning_summary`` and the actor's graph (nodes of the cubes they may read,
    ``focal_nodes`` always among those compared), each scored; those at ``contradiction_threshold`` or above are
    reported, the rest counted. Reads only."""
    summary = _clean_summary(reasoning_summary)
    threshold = CONTRADICTION_THRESHOLD.clean(contradiction_threshold, field="contradiction_threshold")
    threshold = CONTRADICTION_THRESHOLD_DEFAULT if threshold is None else threshold
    focal = _clean_focal(actor, focal_nodes)
    said = [piece.strip() for piece in _SENTENCE_END.split(summary) if piece.strip()][:CRITIQUE_SENTENCES]
    claims = [causal_claims(sentence) for sentence in said]  # each sentence's own claim
    sides = [side for sentence_claims in claims for claim in sentence_claims for side in (claim.cause, claim.effect)]
    vectors = np.asarray(embed_texts([*said, *sides]), dtype=np.float64)  # one model call
    sentence_vectors, side_vectors = vectors[:len(said)], vectors[len(said):]
    cube_ids = readable_cube_ids(actor)
    scope = live_nodes(cube_ids)
    nearest = nearest_nodes(scope, list(sentence_vectors), k=CRITIQUE_NEIGHBOURS)
    related = _with_focal(nearest, focal, sentence_vectors)
    nodes = {str(pk): memory for pk, memory in Memory.objects.filter(pk__in={node for row in related for node, _ in row})
             .only("id", "content", "kind").in_bulk().items()}
    findings = _text_findings(said, related, nodes)
    findings += _causal_findings(said, claims, nearest_nodes(scope, list(side_vectors), k=1), cube_ids)
    best: dict[tuple, CritiqueFinding] = {}
    for finding in findings:
        key = (finding.sentence_index, finding.node_id, finding.kind)
        if key not in best or finding.score > best[key].score:
            best[key] = finding
    ranked = sorted(best.values(), key=lambda f: (-f.score, f.sentence_index, f.node_id, f.kind))
    reported = [finding for finding in ranked if finding.score >= threshold]
    return Critique(sentences=said, nearest=related, contradictions=reported[:CRITIQUE_FINDINGS],
                    below_threshold=len(ranked) - len(reported), threshold=threshold)


def _with_focal(nearest: list[list[tuple[str, float]]], focal: list[str], sentence_vectors: np.ndarray):
    """Each sentence's nearest nodes and the focal nodes, those at CRITIQUE_RELATED_COSINE or closer, best first."""
    focal_cosines = {}
    if focal:
        stored = dict(MemoryVector.objects.filter(memory_id__in=focal).values_list("memory_id", "embedding"))
        ids = [node for node in focal if node in {str(key) for key in stored}]
        if ids:
            by_id = {str(key): value for key, value in stored.items()}
            matrix = np.asarray([by_id[node] for node in ids], dtype=np.float64)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            focal_cosines = dict(zip(ids, (sentence_vectors @ matrix.T).T))
    related = []
    for index, row in enumerate(nearest):
        cosines = dict(row)
        for node, column in focal_cosines.items():
            cosines[node] = float(column[index])
        related.append(sorted(((node, cosine) for node, cosine in cosines.items()
                               if cosine >= CRITIQUE_RELATED_COSINE), key=lambda item: (-item[1], item[0])))
    return related


def _text_findings(said: list[str], related, nodes: dict[str, Memory]) -> list[CritiqueFinding]:
    node_ids = list(nodes)
    corrections: dict[str, list[str]] = {}
    for memory_id, text in (Annotation.objects.filter(memory_id__in=node_ids,
                                                      annotation_type=Annotation.AnnotationType.CORRECTION)
                            .order_by("created_at", "id").values_list("memory_id", "text")):
        corrections.setdefault(str(memory_id), []).append(text)
    decision_nodes = [node for node, memory in nodes.items() if memory.kind == Memory.Kind.DECISION]
    superseded = {str(decision.node_id): decision for decision in Decision.objects.filter(
        node_id__in=decision_nodes, status=Decision.Status.SUPERSEDED).select_related("superseded_by")
    } if decision_nodes else {}
    findings = []
    for index, sentence in enumerate(said):
        for node, cosine in related[index]:
            memory = nodes.get(node)
            if memory is None:
                continue

            def found(kind: str, score: float, explanation: str, **evidence) -> None:
                findings.append(CritiqueFinding(index, sentence, kind, node, memory.content, score, explanation,
                                                {"similarity": round(cosine, 4), **evidence}))

            clash = conflicts.clash(sentence, memory.content)
            if clash is not None:
                what = ("one of them is negated and the other is not" if clash.reason == "negation"
                        else "they give different numbers for the same thing")
                found(clash.reason, cosine, f"The sentence and node {node} are about {clash.topic or 'the same thing'}"
                                            f", but {what}.", topic=clash.topic)
            for correction in corrections.get(node, []):
                confirmed = conflicts.clash(sentence, correction) is not None
                found("correction", cosine if confirmed else cosine * CORRECTION_UNCONFIRMED,
                      f"Node {node}, which the sentence relies on, carries a correction: \"{correction[:200]}\""
                      + (" - and the sentence contradicts the correction." if confirmed else "."),
                      correction=correction[:QUOTE_CHARS], contradicts_correction=confirmed)
            decision = superseded.get(node)
            if decision is not None:
                later = decision.superseded_by
                found("superseded_decision", cosine,
                      f"Node {node} is the decision \"{decision.title}\", superseded"
                      + (f" by \"{later.title}\"." if later else "."),
                      decision_id=str(decision.pk), superseded_by=str(later.pk) if later else None,
                      superseded_by_node=str(later.node_id) if later and later.node_id else None)
    return findings


def _causal_findings(said: list[str], claims, resolved, cube_ids: list[str]) -> list[CritiqueFinding]:
    """reversed_causal_edge for each claim whose sides name two nodes joined the other way round."""
    named = []
    position = 0
    for index, sentence_claims in enumerate(claims):
        for claim in sentence_claims:
            cause, effect = resolved[position], resolved[position + 1]
            position += 2
            if cause and effect and min(cause[0][1], effect[0][1]) >= CLAIM_RESOLVE_COSINE \
                    and cause[0][0] != effect[0][0]:
                named.append((index, claim, cause[0], effect[0]))
    pairs = [pair for _, _, (a, _), (b, _) in named for pair in ((a, b), (b, a))]
    links = causal_links(pairs)
    nodes = Memory.objects.filter(pk__in={node for pair in pairs for node in pair}, cube_id__in=cube_ids) \
        .only("id", "content").in_bulk() if named else {}
    contents = {str(pk): memory.content for pk, memory in nodes.items()}
    findings = []
    for index, claim, (cause, cause_cos), (effect, effect_cos) in named:
        backward = links.get((effect, cause))
        if backward is None or (cause, effect) in links:
            continue
        findings.append(CritiqueFinding(
            index, said[index], "reversed_causal_edge", effect, contents.get(effect, ""), min(cause_cos, effect_cos),
            f"The sentence claims \"{claim.cause}\" {claim.cue} \"{claim.effect}\", but your graph has the causal link "
            f"the other way: node {effect} -> node {cause} (weight {backward:.2f}).",
            {"claimed": {"cause": cause, "effect": effect}, "graph_edge": {"source": effect, "target": cause,
                                                                         "weight": backward},
             "similarity": round(min(cause_cos, effect_cos), 4)}))
    return findings
