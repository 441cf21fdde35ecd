from drf_spectacular.utils import OpenApiParameter, OpenApiTypes, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response

from apps.core.api.serializers import NoBodySerializer, error_responses, validated
from apps.memories.api.serializers import (
    MEMORY_ALIASES, MemoryBatchResponseSerializer, MemoryBatchStoreSerializer, MemoryDeleteQuerySerializer, MemoryLinkSerializer, MemoryLinksQuerySerializer,
    MemoryListItemSerializer, MemoryListQuerySerializer, MemoryQuerySerializer, MemorySerializer,
    MemoryStoreSerializer, MemoryUpdateSerializer, RetrieveResponseSerializer, SearchResponseSerializer,
)
from apps.memories.selectors import memory_get, memory_links, memory_list
from apps.memories.services import (
    memory_delete, memory_restore, memory_retrieve, memory_search, memory_store, memory_store_many, memory_update,
)
from apps.core.exceptions import InvalidInput
from apps.memories.services.retrieval.scoring import WITH_QUERY
from apps.memories.validation import MemoryFilters

MEMORY_ID = OpenApiParameter("memory_id", OpenApiTypes.UUID, OpenApiParameter.PATH)


@extend_schema(tags=["memories"])
class MemoryListCreateView(generics.GenericAPIView):
    @extend_schema(
        operation_id="memories_list",
        summary="List memories",
        description="The memories of every cube you can read, newest first.",
        parameters=[MemoryListQuerySerializer],
        responses={200: MemoryListItemSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        query = validated(MemoryListQuerySerializer, request.query_params)
        memories = memory_list(
            actor=request.user, cube_id=query.get("cube"), primary_sector=query.get("sector"),
            include_deleted=query["deleted"] == "include", only_deleted=query["deleted"] == "only",
        )
        page = self.paginate_queryset(memories)
        return self.get_paginated_response(MemoryListItemSerializer(page, many=True).data)

    @extend_schema(
        operation_id="memories_store",
        summary="Store a memory",
        description="Embeds the memory in five sectors, extracts keywords when none are given, and links it to "
                    "its nearest neighbours.",
        request=MemoryStoreSerializer,
        responses={201: MemorySerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(MemoryStoreSerializer, request.data)
        with MEMORY_ALIASES.reported():
            result = memory_store(actor=request.user, **MEMORY_ALIASES.arguments(data))
        return Response(MemorySerializer(result.memory).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["memories"])
class MemoryBatchStoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="memories_store_batch",
        summary="Store many memories at once",
        description="Every memory is validated before any is written, and the batch is written whole or not at "
                    "all: an error names the memory by its index (`memories[2].content`). One model call embeds "
                    "them all, which makes this far faster than one store per memory; each is linked to its "
                    "nearest neighbours, the batch's earlier memories included.",
        request=MemoryBatchStoreSerializer,
        responses={201: MemoryBatchResponseSerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request):
        data = validated(MemoryBatchStoreSerializer, request.data)
        items = [MEMORY_ALIASES.arguments(item) for item in data["memories"]]
        try:
            with MEMORY_ALIASES.reported():
                results = memory_store_many(actor=request.user, items=items, cube_id=data.get("cube"))
        except InvalidInput as exc:
            index = exc.extra.get("index")
            if index is None:
                raise
            field = f"memories[{index}].{exc.field}"
            raise InvalidInput(f"{field}: {exc.message.split(': ', 1)[-1]}", field=field, extra={"index": index}) from exc
        return Response({"memories": MemorySerializer([result.memory for result in results], many=True).data,
                         "links_created": [result.links_created for result in results]},
                        status=status.HTTP_201_CREATED)


@extend_schema(tags=["memories"], parameters=[MEMORY_ID])
class MemoryDetailView(generics.GenericAPIView):
    @extend_schema(
        operation_id="memories_get",
        summary="Get a memory",
        description="Soft-deleted memories are returned too, with `deleted_at` set.",
        responses={200: MemorySerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, memory_id: str):
        return Response(MemorySerializer(memory_get(actor=request.user, memory_id=memory_id)).data)

    @extend_schema(
        operation_id="memories_update",
        summary="Update a memory",
        description="Only the fields given change. New content is re-embedded and relinked.",
        request=MemoryUpdateSerializer,
        responses={200: MemorySerializer, **error_responses(400, 401, 403, 404)},
    )
    def patch(self, request, memory_id: str):
        changes = validated(MemoryUpdateSerializer, request.data)
        with MEMORY_ALIASES.reported():
            result = memory_update(actor=request.user, memory_id=memory_id, **MEMORY_ALIASES.arguments(changes))
        return Response(MemorySerializer(result.memory).data)

    @extend_schema(
        operation_id="memories_delete",
        summary="Delete a memory",
        description="Soft by default: hidden from lists and results, strength 0, restorable. `?hard=true` "
                    "removes it with its vectors and links.",
        parameters=[MemoryDeleteQuerySerializer],
        responses={204: None, **error_responses(400, 401, 403, 404)},
    )
    def delete(self, request, memory_id: str):
        query = validated(MemoryDeleteQuerySerializer, request.query_params)
        memory_delete(actor=request.user, memory_id=memory_id, soft=not query["hard"])
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema(tags=["memories"], parameters=[MEMORY_ID])
class MemoryRestoreView(generics.GenericAPIView):
    @extend_schema(
        operation_id="memories_restore",
        summary="Restore a soft-deleted memory",
        description="Brings back its strength from before the deletion.",
        request=None,
        responses={200: MemorySerializer, **error_responses(400, 401, 403, 404)},
    )
    def post(self, request, memory_id: str):
        validated(NoBodySerializer, request.data)
        with MEMORY_ALIASES.reported():
            memory = memory_restore(actor=request.user, memory_id=memory_id)
        return Response(MemorySerializer(memory).data)


@extend_schema(tags=["memories"], parameters=[MEMORY_ID])
class MemoryLinksView(generics.GenericAPIView):
    @extend_schema(
        operation_id="memories_links",
        summary="List the links of a memory",
        description="Strongest first. Links to memories you cannot read are left out.",
        parameters=[MemoryLinksQuerySerializer],
        responses={200: MemoryLinkSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, memory_id: str):
        query = validated(MemoryLinksQuerySerializer, request.query_params)
        links = memory_links(actor=request.user, memory_id=memory_id, direction=query["direction"])
        page = self.paginate_queryset(links)
        return self.get_paginated_response(MemoryLinkSerializer(page, many=True).data)


class MemoryQueryView(generics.GenericAPIView):
    """Retrieve and search: reads sent as POST (for a structured body), so a read token may call them."""

    read_only_post = True

    @staticmethod
    def service_arguments(request) -> dict:
        data = validated(MemoryQuerySerializer, request.data)
        date_range = data.pop("date_range", None) or {}
        arguments = {"text": data.pop("text", None), "limit": data.pop("limit"), "offset": data.pop("offset")}
        with MEMORY_ALIASES.reported():
            arguments["filters"] = MemoryFilters.build(
                **MEMORY_ALIASES.arguments(data), date_start=date_range.get("start"), date_end=date_range.get("end"),
            )
        return arguments


@extend_schema(tags=["memories"])
class MemoryRetrieveView(MemoryQueryView):
    @extend_schema(
        operation_id="memories_retrieve",
        summary="Retrieve memories",
        description=f"Ranked by {WITH_QUERY} (relevance fuses dense and lexical similarity, plus boosts); "
                    "without text, by salience, recency and links. Returned memories are reinforced.",
        request=MemoryQuerySerializer,
        responses={200: RetrieveResponseSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        arguments = self.service_arguments(request)
        with MEMORY_ALIASES.reported():
            result = memory_retrieve(actor=request.user, **arguments)
        return Response(RetrieveResponseSerializer({"results": result.items, "total_count": result.total_count}).data)


@extend_schema(tags=["memories"])
class MemorySearchView(MemoryQueryView):
    @extend_schema(
        operation_id="memories_search",
        summary="Search memories",
        description="PostgreSQL full text with AND, OR, NOT, -word and \"quoted phrases\", fused with vector "
                    "similarity; each hit has a highlight and its matched terms. Returned memories are reinforced.",
        request=MemoryQuerySerializer,
        responses={200: SearchResponseSerializer, **error_responses(400, 401, 403)},
    )
    def post(self, request):
        arguments = self.service_arguments(request)
        with MEMORY_ALIASES.reported():
            result = memory_search(actor=request.user, **arguments)
        return Response(SearchResponseSerializer({
            "results": result.items, "total_count": result.total_count, "search_type": result.search_type,
            "total_count_exact": result.total_exact, "did_you_mean": result.suggestion,
        }).data)
