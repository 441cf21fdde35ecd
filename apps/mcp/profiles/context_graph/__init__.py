"""The Context Graph profile (seed 002), served at /mcp/context-graph/: its tool table, joined from one module per
group of tools, each owning its input models, adapters and TOOLS. Every answer, errors too, carries the caller's
pulse (pulse.py)."""
from __future__ import annotations

from apps.mcp.profile import Profile
from apps.mcp.profiles.context_graph import (
    context, curation, dream, immune, planning, reasoning, retrieval, state, status,
)
from apps.mcp.profiles.context_graph.envelope import ContextGraphEnvelope
from apps.mcp.profiles.context_graph.pulse import with_pulse

# The seed's server description, as it writes it.
DESCRIPTION = (
    "I am your Bio-Nervous Context Graph—your long-term memory system. I implement a 5-layer neural "
    "architecture with UTL (Unified Theory of Learning) for optimal knowledge retrieval and "
    "consolidation.\n"
    "\n"
    "**FIRST ACTION**: Call `get_graph_manifest` to understand my 5-layer architecture and when to "
    "use which tools.\n"
    "\n"
    "**ROUTINE CHECK**: Call `get_memetic_status` when you feel confused (High Entropy) or notice "
    "inconsistencies (Low Coherence). I will suggest your next action.\n"
    "\n"
    "**I HANDLE**: Memory storage, semantic search, causal reasoning, and memory consolidation "
    "(dreaming).\n"
    "\n"
    "**YOU HANDLE**: Curation—use `merge_concepts`, `forget_concept`, `annotate_node` when I "
    "present maintenance tasks in my `curation_tasks` inbox."
)

PROFILE = Profile(name="context-graph", title="Context Graph", description=DESCRIPTION,
                  envelope=ContextGraphEnvelope(), after_call=with_pulse,
                  tools=(*context.TOOLS, *retrieval.TOOLS, *curation.TOOLS, *status.TOOLS, *reasoning.TOOLS,
                         *state.TOOLS, *immune.TOOLS, *dream.TOOLS, *planning.TOOLS),
                  resources=(*status.RESOURCES, *planning.RESOURCES))
