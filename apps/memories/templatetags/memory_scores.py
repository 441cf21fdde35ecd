"""Template tags of the memory pages: the score formula they show comes from the weights retrieval uses."""
from django import template

from apps.memories.services.retrieval.scoring import WITH_QUERY

register = template.Library()


@register.simple_tag
def score_formula() -> str:
    """The composite score with a query, e.g. "0.9 relevance + 0.05 salience + 0.05 recency"."""
    return str(WITH_QUERY)
