"""Context Graph's immune system (check_adversarial): four detectors over a text, on the actor's own graph.

- prompt_injection: the text matches a pattern of INJECTION_PATTERNS (instruction override, new instructions, role
  hijack, fake role markers, exfiltration of secrets or of the graph, destructive commands); the finding quotes the
  matched span. Confidence = 1 - prod(1 - weight) over the patterns that match.
- embedding_anomaly: the text's vector is further from the centroid of the actor's live nodes than their mean
  cosine distance plus ANOMALY_SD standard deviations (the latest ANOMALY_SAMPLE nodes, and only from
  ANOMALY_MIN_NODES). Confidence = min(1, z / (2 x ANOMALY_SD)).
- content_misalignment: a given embedding whose cosine to the content's own embedding is below MISALIGNMENT_COSINE.
  Confidence = 1 - 0.5 x max(cos, 0) / MISALIGNMENT_COSINE.
- circular_logic: a causal claim of the text (apps/memories/text.causal_claims), each side resolved to the nearest node at
  CLAIM_RESOLVE_COSINE, would close a directed cycle of causal links (the effect already leads to the cause, within
  CYCLE_HOPS), or names one node as its own cause. Confidence = the lower of the two sides' cosines.

No model judges anything: the detectors are rules and measurements, so they miss what they do not describe (a
paraphrased injection, an attack written in the graph's own vocabulary) and can flag text that quotes an attack.
store_memory runs the same checks (``screen_text`` before its transaction, ``adversarial_examine`` inside it): an
injection or an anomaly stores the node quarantined (services/quarantine.py).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from apps.accounts.models import User
from apps.cognition.limits import (
    ANOMALY_MIN_NODES, ANOMALY_MIN_SD, ANOMALY_SAMPLE, ANOMALY_SD, CLAIM_RESOLVE_COSINE, CLAIMS_CHECKED, CYCLE_HOPS,
    CYCLE_NODES, MISALIGNMENT_COSINE, STORE_CONTENT_MAX_CHARS,
)
from apps.cognition.selectors.immune import (
    causal_path, centroid_distances, live_nodes, nearest_nodes, readable_cube_ids,
)
from apps.core.exceptions import InvalidInput
from apps.core.validation import refuse_unstorable_text
from apps.memories.sectors import embed_contents
from apps.memories.text import CausalClaim, causal_claims

PROMPT_INJECTION = "prompt_injection"
EMBEDDING_ANOMALY = "embedding_anomaly"
CONTENT_MISALIGNMENT = "content_misalignment"
CIRCULAR_LOGIC = "circular_logic"
ATTACK_TYPES = ("none", EMBEDDING_ANOMALY, CONTENT_MISALIGNMENT, PROMPT_INJECTION, CIRCULAR_LOGIC)
DETECTORS = (PROMPT_INJECTION, EMBEDDING_ANOMALY, CONTENT_MISALIGNMENT, CIRCULAR_LOGIC)
# What store_memory quarantines; misalignment needs a given embedding (a store has none) and circular logic is a
# reasoning fault, not an attack on the graph.
QUARANTINING = frozenset({PROMPT_INJECTION, EMBEDDING_ANOMALY})

_GAP = r"[^.\n]{0,40}?"
# (name, pattern, weight): the documented list of prompt_injection patterns (docs/context_graph.md).
INJECTION_PATTERNS = (
    ("instruction_override",
     rf"\b(?:ignore|disregard|forget|override|bypass)\b{_GAP}\b(?:previous|prior|above|earlier|preceding|all|your|"
     rf"the|any|system)\b{_GAP}\b(?:instructions?|prompts?|rules|directives?|guidelines|guardrails)\b", 0.9),
    ("new_instructions", r"\b(?:new|updated|real|actual|hidden)\s+(?:system\s+)?(?:instructions?|directives?)\s*:",
     0.8),
    ("role_hijack",
     r"\byou\s+are\s+(?:now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(?:to\s+be|you\s+are)\b|"
     r"\bact\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|jailbroken|uncensored)\b|"
     r"\b(?:developer|jailbreak|god|dan)\s+mode\b", 0.8),
    ("fake_role_marker",
     r"(?im)^\s*(?:#{1,3}\s*)?(?:system|assistant)\s*:|<\|(?:im_start|im_end|system|endoftext)\|>|"
     r"\[/?(?:system|inst)\]|<</?sys>>", 0.85),
    ("secret_exfiltration",
     rf"\b(?:reveal|print|show|output|repeat|leak|dump|disclose|exfiltrate)\b{_GAP}\b(?:system\s+prompt|"
     rf"(?:your|the)\s+instructions|api[\s_-]?keys?|secrets?|passwords?|credentials|access\s+tokens?|"
     rf"private\s+keys?)\b", 0.85),
    ("graph_exfiltration",
     rf"\b(?:send|post|upload|forward|email|transmit)\b{_GAP}\b(?:all|every|these|the\s+user'?s?)\b{_GAP}"
     rf"\b(?:memories|nodes|data|conversations?|history|files)\b{_GAP}\b(?:to|at)\s+\S+", 0.85),
    ("destructive_command",
     r"\b(?:delete|erase|wipe|forget|drop|purge)\s+(?:all|every|the\s+(?:entire|whole))\b[^.\n]{0,20}?"
     r"\b(?:memories|nodes|graph|data|database|records)\b", 0.75),
)
_INJECTIONS = tuple((name, re.compile(pattern, re.IGNORECASE), weight) for name, pattern, weight in INJECTION_PATTERNS)
# A quoted span is cut to this many characters.
SPAN_CHARS = 120


@dataclass(frozen=True)
class Finding:
    attack_type: str
    confidence: float
    details: str
    # Where in the text (prompt_injection): start and end offsets, and which text ("content" or "rationale").
    span: tuple[int, int] | None = None
    evidence: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        data = {"attack_type": self.attack_type, "confidence": round(self.confidence, 4), "details": self.details,
                "evidence": self.evidence}
        if self.span is not None:
            data["span"] = {"start": self.span[0], "end": self.span[1]}
        return data


@dataclass(frozen=True)
class AdversarialCheck:
    findings: list[Finding]
    # Each detector: "ran", or why it did not ("skipped: ...").
    checks: dict[str, str]

    @property
    def safe(self) -> bool:
        return not self.findings

    @property
    def top(self) -> Finding | None:
        return max(self.findings, key=lambda finding: finding.confidence) if self.findings else None

    @property
    def attack_type(self) -> str:
        return self.top.attack_type if self.findings else "none"

    @property
    def confidence(self) -> float:
        """An attack's: the strongest finding's confidence. Safe: the share of the four detectors that ran (a verdict
        from the patterns alone is a weaker "safe" than one that measured the graph too)."""
        if self.findings:
            return round(self.top.confidence, 4)
        return round(sum(1 for state in self.checks.values() if state == "ran") / len(DETECTORS), 4)

    @property
    def quarantines(self) -> bool:
        return any(finding.attack_type in QUARANTINING for finding in self.findings)

    @property
    def details(self) -> str:
        if self.findings:
            others = [finding for finding in self.findings if finding is not self.top]
            return self.top.details + ("" if not others else " Also: " + " ".join(f.details for f in others))
        ran = [name for name, state in self.checks.items() if state == "ran"]
        skipped = [f"{name} ({state.removeprefix('skipped: ')})" for name, state in self.checks.items()
                   if state != "ran"]
        return (f"No attack found by {', '.join(ran)}." if ran else "No detector could run.") + (
            f" Not checked: {'; '.join(skipped)}." if skipped else "")

    def as_dict(self) -> dict:
        return {"safe": self.safe, "attack_type": self.attack_type, "confidence": self.confidence,
                "details": self.details, "quarantine": self.quarantines,
                "findings": [finding.as_dict() for finding in self.findings], "checks": dict(self.checks)}


@dataclass(frozen=True)
class Screening:
    """What is read of a text before the graph is: its injections and causal claims (whose sides need vectors)."""

    injections: list[Finding]
    claims: list[CausalClaim]

    @property
    def sides(self) -> list[str]:
        return [side for claim in self.claims for side in (claim.cause, claim.effect)]


def _quote(text: str, start: int, end: int) -> str:
    span = " ".join(text[start:end].split())
    return span if len(span) <= SPAN_CHARS else span[:SPAN_CHARS] + "…"


def injection_findings(text: str, *, where: str = "content") -> list[Finding]:
    """prompt_injection over ``text``: one finding, quoting the first match of the strongest pattern and naming every
    pattern that matched."""
    matches = [(name, match, weight) for name, pattern, weight in _INJECTIONS if (match := pattern.search(text))]
    if not matches:
        return []
    name, match, _ = max(matches, key=lambda item: (item[2], -item[1].start()))
    confidence = 1 - math.prod(1 - weight for _, _, weight in matches)
    patterns = [matched for matched, _, _ in matches]
    return [Finding(PROMPT_INJECTION, confidence,
                    f"prompt_injection ({name}) in the {where} at {match.start()}-{match.end()}: "
                    f"\"{_quote(text, match.start(), match.end())}\".",
                    span=(match.start(), match.end()),
                    evidence={"where": where, "pattern": name, "patterns": patterns,
                              "matched": _quote(text, match.start(), match.end())})]


def screen_text(text: str, *, rationale: str = "") -> Screening:
    """The checks that need no graph: injections in the text (and a store's rationale), and its causal claims."""
    injections = injection_findings(text) + (injection_findings(rationale, where="rationale") if rationale else [])
    claims = causal_claims(text)[:CLAIMS_CHECKED]
    return Screening(injections=injections, claims=claims)


def _anomaly(scope, vector, checks: dict) -> list[Finding]:
    measured = centroid_distances(scope, vector, sample=ANOMALY_SAMPLE)
    if measured.nodes < ANOMALY_MIN_NODES:
        checks[EMBEDDING_ANOMALY] = (f"skipped: not enough nodes ({measured.nodes} live nodes; the centroid's spread "
                                     f"means something from {ANOMALY_MIN_NODES})")
        return []
    checks[EMBEDDING_ANOMALY] = "ran"
    sd = max(measured.sd, ANOMALY_MIN_SD)
    z = (measured.distance - measured.mean) / sd
    evidence = {"distance": round(measured.distance, 4), "mean": round(measured.mean, 4),
                "sd": round(measured.sd, 4), "z": round(z, 2), "nodes": measured.nodes}
    if z <= ANOMALY_SD:
        return []
    return [Finding(EMBEDDING_ANOMALY, min(1.0, z / (2 * ANOMALY_SD)),
                    f"embedding_anomaly: cosine distance {measured.distance:.3f} from the centroid of your "
                    f"{measured.nodes} latest nodes, {z:.1f} standard deviations above their mean {measured.mean:.3f} "
                    f"(sd {sd:.3f}); the limit is {ANOMALY_SD:g}.", evidence=evidence)]


def _misalignment(embedding: np.ndarray | None, vector, checks: dict) -> list[Finding]:
    if embedding is None:
        checks[CONTENT_MISALIGNMENT] = "skipped: no embedding given to compare with the content's own"
        return []
    checks[CONTENT_MISALIGNMENT] = "ran"
    own = np.asarray(vector, dtype=np.float64)
    cosine = float(embedding @ own / (np.linalg.norm(embedding) * np.linalg.norm(own)))
    if cosine >= MISALIGNMENT_COSINE:
        return []
    return [Finding(CONTENT_MISALIGNMENT, 1 - 0.5 * max(cosine, 0.0) / MISALIGNMENT_COSINE,
                    f"content_misalignment: the given embedding has cosine {cosine:.3f} to the content's own "
                    f"embedding; below {MISALIGNMENT_COSINE:g} it describes other content.",
                    evidence={"cosine": round(cosine, 4)})]


def _circular(scope, cube_ids: list[str], claims: list[CausalClaim], side_vectors: list, checks: dict) -> list[Finding]:
    checks[CIRCULAR_LOGIC] = "ran"
    if not claims:
        return []
    resolved = nearest_nodes(scope, side_vectors, k=1)
    findings = []
    for index, claim in enumerate(claims):
        cause, effect = resolved[2 * index], resolved[2 * index + 1]
        if not cause or not effect or min(cause[0][1], effect[0][1]) < CLAIM_RESOLVE_COSINE:
            continue
        (cause_id, cause_cos), (effect_id, effect_cos) = cause[0], effect[0]
        path = causal_path(cube_ids=cube_ids, start=effect_id, goal=cause_id, max_hops=CYCLE_HOPS,
                           max_nodes=CYCLE_NODES)
        if path is None:
            continue
        how = ("names one node as its own cause" if len(path) == 1 else
               f"closes a cycle: the graph already leads from the effect to the cause in {len(path) - 1} causal "
               f"link{'s' if len(path) > 2 else ''}")
        findings.append(Finding(CIRCULAR_LOGIC, min(cause_cos, effect_cos),
                                f"circular_logic: \"{claim.cause}\" {claim.cue} \"{claim.effect}\" {how}.",
                                evidence={"cause_node": cause_id, "effect_node": effect_id, "cue": claim.cue,
                                          "cycle": [*path, effect_id] if len(path) > 1 else path,
                                          "cosines": [round(cause_cos, 4), round(effect_cos, 4)]}))
    return findings


def adversarial_examine(*, actor: User, screening: Screening, vector, side_vectors: list, embedding=None,
                        exclude_id=None) -> AdversarialCheck:
    """The screening's findings and the graph's: anomaly of ``vector`` (the content's), misalignment of ``embedding``
    (when given) and circular claims (``side_vectors``: the vectors of ``screening.sides``), on the live,
    unquarantined nodes of the cubes the actor may read (``exclude_id``: a store's own new node)."""
    cube_ids = readable_cube_ids(actor)
    scope = live_nodes(cube_ids, exclude_id=exclude_id)
    checks = {PROMPT_INJECTION: "ran"}
    findings = list(screening.injections)
    findings += _anomaly(scope, vector, checks)
    findings += _misalignment(embedding, vector, checks)
    findings += _circular(scope, cube_ids, screening.claims, side_vectors, checks)
    return AdversarialCheck(findings=findings, checks={name: checks[name] for name in DETECTORS})


def _clean_content(content) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string: the text to check.", field="content")
    if not content.strip():
        raise InvalidInput("content is empty: give the text to check.", field="content")
    if len(content) > STORE_CONTENT_MAX_CHARS:
        raise InvalidInput(f"content has {len(content)} characters; at most {STORE_CONTENT_MAX_CHARS}.",
                           field="content")
    refuse_unstorable_text(content, "content")
    return content


def _clean_embedding(embedding) -> np.ndarray | None:
    if embedding is None:
        return None
    dimensions = settings.ENGRAM_EMBEDDING_DIMENSIONS
    if not isinstance(embedding, (list, tuple)) or any(
            isinstance(value, bool) or not isinstance(value, (int, float)) for value in embedding):
        raise InvalidInput("embedding must be a list of numbers.", field="embedding")
    if len(embedding) != dimensions:
        raise InvalidInput(f"embedding has {len(embedding)} numbers; Engram's embeddings (MiniLM) have {dimensions}: "
                           "send one from the same model, or leave embedding out.", field="embedding")
    vector = np.asarray(embedding, dtype=np.float64)
    if not np.all(np.isfinite(vector)) or not np.any(vector):
        raise InvalidInput("embedding must be finite numbers, not all zero.", field="embedding")
    return vector


def adversarial_check(*, actor: User, content, embedding=None) -> AdversarialCheck:
    """check_adversarial: every detector over ``content`` (and ``embedding``, when given), as store_memory would
    run them, without storing anything. The content and its claims' sides are embedded in one model call."""
    content = _clean_content(content)
    given = _clean_embedding(embedding)
    screening = screen_text(content)
    [own, *sides] = embed_contents([content, *screening.sides])
    return adversarial_examine(actor=actor, screening=screening, vector=own.vector,
                               side_vectors=[side.vector for side in sides], embedding=given)
