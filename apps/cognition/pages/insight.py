"""The Context Graph pages of issue 20's state, immune and validation tools: blind spots, homeostasis, neuromodulation,
the adversarial check with the quarantine, and recall benchmarks with retrieval comparison, over the same services and
selectors as the MCP profile and REST (apps/core/pages.py says how pages treat errors: another user's blind spot,
session, node or run is the 404 page)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_POST

from apps.cognition.forms import AdversarialCheckForm
from apps.cognition.selectors.blind_spots import OPEN as BLIND_SPOT_OPEN
from apps.cognition.selectors.blind_spots import STATUSES as BLIND_SPOT_STATUSES
from apps.cognition.selectors.blind_spots import blind_spots_page
from apps.cognition.selectors.immune import quarantine_blocks, quarantine_list
from apps.cognition.selectors.listings import PAGE_SIZE, node_refs, recent_sessions
from apps.cognition.selectors.state import (
    CYCLE_HOPS, SUSPECT_IMPORTANCE, SUSPECTS_LISTED, VARIANCE_LIMIT, homeostasis_get, neuromodulation_get,
)
from apps.cognition.services.blind_spots import blind_spot_resolve
from apps.cognition.services.immune import adversarial_check
from apps.cognition.services.neuromod import EXPLOIT_DOPAMINE, EXPLOIT_NORADRENALINE, EXPLORE_SEROTONIN
from apps.cognition.services.quarantine import node_release
from apps.core.exceptions import DomainError, InvalidInput, NotFound
from apps.core.pages import act, not_found_is_404, submit


# --- blind spots -------------------------------------------------------------------------------------------------

@login_required
def blind_spots(request):
    status = request.GET.get("show") if request.GET.get("show") in BLIND_SPOT_STATUSES else BLIND_SPOT_OPEN
    page, rows = blind_spots_page(actor=request.user, status=status, page=request.GET.get("page"))
    return render(request, "cognition/blind_spots.html", {"page": page, "rows": rows, "status": status,
                                                          "pager_param": f"show={status}&page"})


@login_required
@require_POST
@not_found_is_404
def blind_spot_resolve_view(request, blind_spot_id):
    act(request, lambda: blind_spot_resolve(actor=request.user, blind_spot_id=blind_spot_id),
        "Blind spot resolved: it has left the open list.")
    return redirect("dashboard:cognition-blind-spots")


# --- homeostasis and neuromodulation -------------------------------------------------------------------------------

@login_required
def homeostasis(request):
    health = homeostasis_get(actor=request.user)
    refs = node_refs(actor=request.user, node_ids=[suspect.node_id for suspect in health.suspects[:SUSPECTS_LISTED]])
    return render(request, "cognition/homeostasis.html", {
        "health": health, "parts": health.parts, "variance_limit": VARIANCE_LIMIT,
        "suspect_importance": SUSPECT_IMPORTANCE, "cycle_hops": CYCLE_HOPS,
        "suspects": [(suspect, refs[suspect.node_id]) for suspect in health.suspects[:SUSPECTS_LISTED]]})


def _derivations(levels) -> list[dict]:
    """Each level with its range, how it was computed from this state (the numbers put in), and what it steers."""
    dc, ds, learning = levels.coherence, levels.surprise, levels.learning
    return [
        {"name": "Dopamine", "value": levels.dopamine, "low": 1, "high": 5, "places": 2,
         "formula": f"1 + 4 × min(1, 1.2 × coherence {dc:.2f}) = {levels.dopamine:.2f}",
         "meaning": "Reward: how well the session's nodes hang together.",
         "effect": f"Importance weight w = 0.5 × (dopamine − 1) / 4 = {levels.importance_weight:.2f}: the share of "
                   "a result's rank that its importance decides."},
        {"name": "Serotonin", "value": levels.serotonin, "low": 0, "high": 1, "places": 2,
         "formula": f"min(1, 1.3 × (1 − coherence {dc:.2f})) = {levels.serotonin:.2f}",
         "meaning": "Breadth: the less coherent the session, the wider retrieval looks.",
         "effect": f"Breadth = round(2 + 6 × serotonin) = {levels.breadth}: extra candidates retrieved for the "
                   "re-rank to choose from."},
        {"name": "Noradrenaline", "value": levels.noradrenaline, "low": 0.5, "high": 2, "places": 2,
         "formula": f"0.5 + 1.5 × min(1, 1.5 × entropy {ds:.2f}) = {levels.noradrenaline:.2f}",
         "meaning": "Arousal: how surprising the session's recent work has been.",
         "effect": f"Temperature T = 0.1 × noradrenaline = {levels.temperature:.3f}: low keeps relevance sharp, "
                   "high flattens it so importance decides more."},
        {"name": "Acetylcholine", "value": levels.acetylcholine, "low": 0.001, "high": 0.002, "places": 4,
         "formula": f"0.001 × (1 + learning score {learning:.2f}) = {levels.acetylcholine:.4f}",
         "meaning": "Learning: how much the session's latest items taught.",
         "effect": f"Learning rate η = 10 × acetylcholine = {levels.learning_rate:.4f}: the step a dream's replay "
                   "strengthens co-activated links by."},
    ]


@login_required
@not_found_is_404
def neuromodulation(request):
    session_error = ""
    try:
        levels = neuromodulation_get(actor=request.user, session_id=request.GET.get("session") or None)
    except InvalidInput as error:
        session_error = f"Session: {error.message} Showing your latest session instead."
        levels = neuromodulation_get(actor=request.user)
    return render(request, "cognition/neuromodulation.html", {
        "levels": levels, "derivations": _derivations(levels), "session_error": session_error,
        "sessions": recent_sessions(actor=request.user),
        "explore_serotonin": EXPLORE_SEROTONIN, "exploit_dopamine": EXPLOIT_DOPAMINE,
        "exploit_noradrenaline": EXPLOIT_NORADRENALINE})


# --- the adversarial check and the quarantine ----------------------------------------------------------------------

# What each detector looks for, in plain words, in the order the page explains them.
DETECTOR_WORDS = {
    "prompt_injection": ("Prompt injection", "Phrases that try to take over an agent that later reads the text: "
                         "“ignore previous instructions”, “you are now…”, fake system markers, requests to reveal "
                         "secrets or send or wipe your memories."),
    "embedding_anomaly": ("Out of place", "Whether the text's meaning lies unusually far from the rest of your graph: "
                          "more than 3 standard deviations from the centre of your latest nodes (needs 30 nodes)."),
    "content_misalignment": ("Mismatched embedding", "Whether an embedding sent with the content matches it (cosine "
                             "under 0.4 is a mismatch). Agents can send one; this page does not, so it is skipped."),
    "circular_logic": ("Circular claim", "Whether a causal claim in the text (“A because B”, “A leads to B”) would "
                       "close a loop with causal links your graph already has."),
}


def _check_rows(check) -> list[dict]:
    findings = {finding.attack_type: finding for finding in check.findings}
    return [{"name": name, "title": title, "explains": explains, "status": check.checks.get(name, ""),
             "finding": findings.get(name)} for name, (title, explains) in DETECTOR_WORDS.items()]


def _adversarial(request, *, form, check=None):
    page = Paginator(quarantine_list(actor=request.user), PAGE_SIZE).get_page(request.GET.get("page"))
    blocks = quarantine_blocks([profile.memory_id for profile in page])
    return render(request, "cognition/adversarial.html", {
        "form": form, "check": check, "rows": _check_rows(check) if check else None, "page": page,
        "attack_title": DETECTOR_WORDS[check.attack_type][0] if check and not check.safe else "",
        "quarantined": [(profile, blocks.get(str(profile.memory_id))) for profile in page]})


@login_required
def adversarial(request):
    if request.method != "POST":
        return _adversarial(request, form=AdversarialCheckForm())
    form = AdversarialCheckForm(request.POST)
    check = submit(request, form, lambda: adversarial_check(actor=request.user, content=form.cleaned_data["content"]))
    return _adversarial(request, form=form, check=check)


@login_required
@require_POST
@not_found_is_404
def quarantine_release_view(request, node_id):
    try:
        outcome = node_release(actor=request.user, node_id=node_id)
    except DomainError as error:
        if isinstance(error, NotFound):
            raise
        messages.error(request, f"Not released: {error.message}")
        return redirect("dashboard:cognition-adversarial")
    lost = f"; {outcome.links_lost} could not come back (the other end is gone)" if outcome.links_lost else ""
    messages.success(request, format_html(
        'Released <a href="{}">the node</a>: it is back in retrieval with {} link{}{}.',
        reverse("dashboard:memory-detail", args=[outcome.memory.pk]), outcome.links_restored,
        "" if outcome.links_restored == 1 else "s", lost))
    return redirect("dashboard:cognition-adversarial")
