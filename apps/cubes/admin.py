"""Admin for cubes and memberships. Staff manage any cube here (the curator's view); the owner-only rules
of the services apply to users acting for themselves, not to this console."""
from django.contrib import admin

from apps.cubes.models import Cube, CubeMembership


class CubeMembershipInline(admin.TabularInline):
    model = CubeMembership
    extra = 0
    autocomplete_fields = ("user",)


class UnregisteredFilter(admin.SimpleListFilter):
    title = "registration"
    parameter_name = "unregistered"

    def lookups(self, request, model_admin):
        return (("no", "Registered"), ("yes", "Unregistered"))

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(deleted_at__isnull=self.value() == "no")
        return queryset


@admin.register(Cube)
class CubeAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "is_personal", "is_unregistered", "created_at")
    list_filter = (("owner", admin.RelatedOnlyFieldListFilter), "is_personal", UnregisteredFilter)
    list_select_related = ("owner",)
    search_fields = ("id", "name", "owner__username")
    autocomplete_fields = ("owner",)
    inlines = [CubeMembershipInline]

    @admin.display(description="unregistered", boolean=True, ordering="deleted_at")
    def is_unregistered(self, obj: Cube) -> bool:
        return obj.is_unregistered

    def get_readonly_fields(self, request, obj=None):
        # The id is the primary key and memories point at it: set once, at creation.
        return ("id", "created_at", "updated_at") if obj else ("created_at", "updated_at")


@admin.register(CubeMembership)
class CubeMembershipAdmin(admin.ModelAdmin):
    list_display = ("cube", "user", "role", "created_at")
    list_filter = ("role",)
    list_select_related = ("cube", "user")
    search_fields = ("cube__id", "cube__name", "user__username")
    autocomplete_fields = ("cube", "user")
