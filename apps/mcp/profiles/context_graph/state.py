"""Context Graph's state group: utl_status, get_neuromodulation and homeostatic_status, over
apps/cognition/selectors/state.py (the levels' formulas and the re-rank retrieval applies with them are in
apps/cognition/services/neuromod.py).

Input models are the seed's schemas; output schemas are the seed's (state_outputs.py), and utl_status has none there.
The seed's get_neuromodulation takes only session_id, so the levels cannot be set by a caller: they follow the
session's UTL state. An unknown session, or another user's, is -32000."""
from __future__ import annotations

from typing import Any

from pydantic import Field

from apps.accounts.models import User
from apps.cognition.selectors.state import homeostasis_get, neuromodulation_get, utl_status_get
from apps.cognition.state_answers import homeostasis_answer, neuromodulation_answer, utl_status_answer
from apps.core.threads import run_sync
from apps.mcp.auth import READ
from apps.mcp.profile import ToolSpec
from apps.mcp.profiles.context_graph.state_outputs import HOMEOSTATIC_OUTPUT, NEUROMODULATION_OUTPUT
from apps.mcp.profiles.context_graph.status import UUID_FORMAT, NoArguments, UuidText
from apps.mcp.schema import SnakeCaseSeedModel


class UtlStatusInput(SnakeCaseSeedModel):
    session_id: UuidText = Field(json_schema_extra=UUID_FORMAT)


class NeuromodulationInput(SnakeCaseSeedModel):
    session_id: UuidText | None = Field(None, json_schema_extra=UUID_FORMAT)


async def utl_status(actor: User, params: UtlStatusInput) -> dict[str, Any]:
    return utl_status_answer(await run_sync(utl_status_get)(actor=actor, session_id=params.session_id))


async def get_neuromodulation(actor: User, params: NeuromodulationInput) -> dict[str, Any]:
    return neuromodulation_answer(await run_sync(neuromodulation_get)(actor=actor, session_id=params.session_id))


async def homeostatic_status(actor: User, params: NoArguments) -> dict[str, Any]:
    return homeostasis_answer(await run_sync(homeostasis_get)(actor=actor))


TOOLS = (
    ToolSpec(
        name="utl_status",
        description="Get current UTL learning metrics for a session. Engram: the session's cached entropy (the "
                    "moving average of surprise), coherence and learning score, its lifecycle stage and "
                    "interactions, its Johari quadrant (surprise and coherence each above or below 0.5) and its 20 "
                    "latest items with the nodes each activated. Another user's session is not found (-32000).",
        input_model=UtlStatusInput, adapter=utl_status, scope=READ,
    ),
    ToolSpec(
        name="get_neuromodulation",
        description="Get current neuromodulator levels and their effects. Engram computes them from the session's "
                    "UTL state (your latest without session_id): dopamine from coherence weighs importance, "
                    "serotonin from incoherence widens the candidates, noradrenaline from entropy sets the "
                    "temperature of the scores, acetylcholine from the learning score sets the learning rate; "
                    "search_graph and inject_context rank with them now, as effects says. They follow your state: "
                    "settle entropy (epistemic_action) to lower noradrenaline.",
        input_model=NeuromodulationInput, adapter=get_neuromodulation, scope=READ,
        output_schema=NEUROMODULATION_OUTPUT,
    ),
    ToolSpec(
        name="homeostatic_status",
        description="Get graph health metrics and immune system status. Engram measures the live graph you can "
                    "read: importance mean and variance, links, quarantined nodes, and semantic-cancer suspects "
                    "(important nodes on a directed causal cycle or in an open conflict task, listed in suspects); "
                    "health_score is the mean of four parts given in health_parts, and method says how.",
        input_model=NoArguments, adapter=homeostatic_status, scope=READ, output_schema=HOMEOSTATIC_OUTPUT,
    ),
)
