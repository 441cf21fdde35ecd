"""Thoughtbox's served texts: the patterns cookbook (six patterns, each with tool-call JSON that the thoughtbox
tool accepts), the architecture, notebook operations and capabilities resources, and the interleaved-thinking
prompt. Static texts: no database."""
import json
import re

import pytest

from apps.core.exceptions import InvalidInput
from apps.reasoning.content import (
    ARCHITECTURE, CAPABILITIES, NOTEBOOK_OPERATIONS, PATTERNS_COOKBOOK, interleaved_thinking_prompt,
)

THOUGHTBOX_PARAMETERS = {
    "thought", "thoughtNumber", "totalThoughts", "nextThoughtNeeded", "isRevision", "revisesThought",
    "branchFromThought", "branchId", "needsMoreThoughts", "sessionTitle", "sessionTags", "includeGuide",
}
NOTEBOOK_OPERATION_NAMES = ["create", "list", "load", "add_cell", "update_cell", "run_cell", "install_deps",
                            "list_cells", "get_cell", "export"]
SEED_NOTEBOOK_ARGS = {"notebookId", "cellId", "cellType", "content", "filename", "dependencies", "path", "title",
                      "language", "template"}


def json_blocks(markdown: str) -> list[dict]:
    return [json.loads(block) for block in re.findall(r"```json\n(.*?)```", markdown, flags=re.DOTALL)]


def sections(markdown: str, level: str) -> dict[str, str]:
    """Heading -> body for the headings of one level ("## ")."""
    parts = re.split(rf"^{level}(.+)$", markdown, flags=re.MULTILINE)
    return {heading.strip(): body for heading, body in zip(parts[1::2], parts[2::2])}


def test_the_cookbook_has_the_six_core_patterns():
    patterns = list(sections(PATTERNS_COOKBOOK, "## "))
    assert patterns == [
        "1. Forward thinking (1 -> N)", "2. Backward planning (N -> 1)", "3. Branching to explore alternatives",
        "4. Revision of earlier thoughts", "5. Interleaved thinking with tools", "6. Hypothesis testing",
    ]


def test_every_pattern_says_when_to_use_it_and_walks_through_a_sequence():
    for name, body in sections(PATTERNS_COOKBOOK, "## ").items():
        assert "**When to use:**" in body, name
        assert "**Worked sequence:**" in body, name
        assert json_blocks(body), name


def test_every_cookbook_call_is_a_valid_thoughtbox_call():
    calls = json_blocks(PATTERNS_COOKBOOK)
    assert len(calls) >= 6
    for call in calls:
        assert set(call) <= THOUGHTBOX_PARAMETERS, call
        assert isinstance(call["thought"], str) and call["thought"]
        assert isinstance(call["thoughtNumber"], int) and call["thoughtNumber"] >= 1
        assert isinstance(call["totalThoughts"], int) and call["totalThoughts"] >= 1
        assert isinstance(call["nextThoughtNeeded"], bool)
        if call.get("isRevision"):
            assert 1 <= call["revisesThought"] < call["thoughtNumber"]
        if "branchFromThought" in call:
            assert call["branchId"] and call["branchFromThought"] < call["thoughtNumber"]
    # Between them the examples use every parameter of the tool.
    assert set().union(*calls) == THOUGHTBOX_PARAMETERS


def test_the_backward_pattern_starts_at_the_last_thought():
    backward = json_blocks(sections(PATTERNS_COOKBOOK, "## ")["2. Backward planning (N -> 1)"])[0]
    assert backward["thoughtNumber"] == backward["totalThoughts"] > 1


def test_the_notebook_operations_cover_the_ten_operations_with_valid_examples():
    documented = sections(NOTEBOOK_OPERATIONS, "## ")
    assert [name for name in documented if name != "Errors"] == NOTEBOOK_OPERATION_NAMES
    used_args = set()
    for name in NOTEBOOK_OPERATION_NAMES:
        (call,) = json_blocks(documented[name])
        assert call["operation"] == name
        used_args |= set(call["args"])
    assert used_args == SEED_NOTEBOOK_ARGS
    for code in ("NOTEBOOK_NOT_FOUND", "CELL_NOT_FOUND", "EXECUTION_FAILED"):
        assert code in documented["Errors"]


def test_the_architecture_explains_sessions_chain_graph_notebooks_and_exports():
    for fact in ("per MCP client", "SHA-256", '"genesis"', "memory graph", "ENGRAM_NOTEBOOK_EXECUTION",
                 "off in production", "node", "timeout", "export folder", "THOUGHT_NOT_FOUND"):
        assert fact in ARCHITECTURE, fact


def test_the_capabilities_list_the_seed_tools_resources_templates_and_prompts():
    for name in ("`thoughtbox`", "`notebook`", "`mental_models`", "`export_reasoning_chain`",
                 "thoughtbox://patterns-cookbook", "thoughtbox://architecture", "thoughtbox://notebook/operations",
                 "thoughtbox://mental-models/catalog", "thoughtbox://init/sessions", "thoughtbox://capabilities",
                 "thoughtbox://sessions/{sessionId}", "thoughtbox://sessions/{sessionId}/thoughts",
                 "thoughtbox://mental-models/{modelName}", "thoughtbox://notebooks/{notebookId}",
                 "thoughtbox://init/load/{sessionId}", "`list_mcp_assets`", "`interleaved-thinking`"):
        assert name in CAPABILITIES, name


def test_the_prompt_embeds_the_task_and_the_limit_in_five_phases():
    task = "Find out why the nightly billing export doubled in size since release 2.31"
    prompt = interleaved_thinking_prompt(task, thoughts_limit=42)
    assert task in prompt
    flowing = " ".join(prompt.split())
    assert "at most **42 thoughts**" in flowing and "within the limit of 42" in flowing
    phases = ["Tooling inventory", "Sufficiency assessment", "Strategy development", "Execution", "Final answer"]
    positions = [prompt.index(f"Phase {number} -- {phase}") for number, phase in enumerate(phases, start=1)]
    assert positions == sorted(positions)
    assert "$" not in prompt.replace(task, "")


def test_the_prompt_takes_its_default_limit_and_keeps_text_with_dollar_signs():
    prompt = interleaved_thinking_prompt("Estimate the $ cost of $HOME backups")
    assert "at most **100 thoughts**" in prompt
    assert "Estimate the $ cost of $HOME backups" in prompt


def test_clear_folder_asks_to_clean_up_the_artefacts():
    cleaned = interleaved_thinking_prompt("Sum the invoices", clear_folder=True)
    kept = interleaved_thinking_prompt("Sum the invoices", clear_folder=False)
    assert "## Clean-up" in cleaned and "deletes" in cleaned
    assert "## Clean-up" not in kept and "Leave the notebooks" in kept


@pytest.mark.parametrize("task", ["", "   \n", None])
def test_the_prompt_needs_a_task(task):
    with pytest.raises(InvalidInput) as raised:
        interleaved_thinking_prompt(task)
    assert raised.value.field == "task"


@pytest.mark.parametrize("limit", [0, -5, 1001, True, 2.5, "50"])
def test_the_thoughts_limit_is_a_whole_number_from_1_to_1000(limit):
    with pytest.raises(InvalidInput) as raised:
        interleaved_thinking_prompt("Sum the invoices", thoughts_limit=limit)
    assert raised.value.field == "thoughts_limit"
    assert "1 to 1000" in raised.value.message


@pytest.mark.parametrize("limit", [1, 1000])
def test_the_limits_bounds_are_accepted(limit):
    assert f"at most **{limit} thoughts**" in interleaved_thinking_prompt("Sum the invoices", thoughts_limit=limit)
