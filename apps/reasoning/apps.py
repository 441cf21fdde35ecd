from django.apps import AppConfig


class ReasoningConfig(AppConfig):
    name = "apps.reasoning"
    label = "reasoning"
    verbose_name = "Reasoning (Thoughtbox and ThoughtMCP)"
