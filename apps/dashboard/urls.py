app_name = "dashboard"
urlpatterns = []
