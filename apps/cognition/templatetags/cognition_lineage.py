"""The Context Graph panel of a memory's page: its lineage and annotations. A template tag, so that the memory page
(of the memories app, below cognition) shows them without importing cognition."""
from django import template

from apps.cognition.limits import LINEAGE_DEPTH
from apps.cognition.selectors.lineage import CHANGE_TYPES, node_record

register = template.Library()


@register.inclusion_tag("cognition/_lineage.html", takes_context=True)
def node_lineage_panel(context, memory) -> dict:
    """The latest changes of ``memory`` (one the page already showed the user, so it is readable), newest first."""
    record = node_record(actor=context["request"].user, node_id=memory.pk, depth=LINEAGE_DEPTH.high)
    return {"record": record, "lineage": record.lineage,
            "changes": [(event, CHANGE_TYPES[event.action]) for event in record.lineage.events]}
