from django.contrib import admin

from apps.cubes.models import Cube, CubeMembership


class CubeMembershipInline(admin.TabularInline):
    model = CubeMembership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(Cube)
class CubeAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "owner", "is_personal", "created_at")
    list_filter = ("is_personal",)
    list_select_related = ("owner",)
    search_fields = ("id", "name", "owner__username")
    autocomplete_fields = ("owner",)
    inlines = [CubeMembershipInline]

    def get_readonly_fields(self, request, obj=None):
        # The id is the primary key and memories point at it: set once, at creation.
        return ("id", "created_at", "updated_at") if obj else ("created_at", "updated_at")
