"""A URLconf with nothing in it: no name reverses."""
urlpatterns = []
