"""Template tags of the memory pages: the score formula they show comes from the weights retrieval uses."""
from django import template

from apps.memories.services.retrieval.scoring import WITH_QUERY

register = template.Library()


@register.simple_tag
def score_formula() -> str:
    """The composite score with a query, e.g. "0.6 relevance + 0.2 salience + 0.1 recency + 0.1 link weight"."""
    return str(WITH_QUERY)
