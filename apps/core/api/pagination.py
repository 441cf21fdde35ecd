from rest_framework import pagination

from apps.core.limits import LIST_LIMIT


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    default_limit = LIST_LIMIT.default
    max_limit = LIST_LIMIT.high
