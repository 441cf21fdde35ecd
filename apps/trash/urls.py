from django.urls import path

from apps.trash import views

app_name = "trash"
urlpatterns = [
    path("", views.trash_index, name="index"),
    path("<slug:kind>/<str:item_id>/restore/", views.trash_restore_view, name="restore"),
    path("<slug:kind>/<str:item_id>/delete/", views.trash_purge_view, name="purge"),
]
