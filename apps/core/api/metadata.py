"""What OPTIONS answers on every REST endpoint."""
from rest_framework.metadata import SimpleMetadata


class EndpointMetadata(SimpleMetadata):
    """Name, description, allowed methods, renderers and parsers; request bodies are described by /api/schema/.

    SimpleMetadata's `actions` asks the view for its one serializer_class, which Engram's views do not have
    (each method validates with its own serializer, named in the schema): that assertion made OPTIONS a 500.
    """

    def determine_actions(self, request, view):
        return {}
