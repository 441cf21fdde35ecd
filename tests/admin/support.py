"""What the admin tests share: a model's changelist URL and running an action on some of its rows."""
from django.urls import reverse


def changelist(model) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")


def run_action(client, model, action, objects) -> list[str]:
    """POST the action for ``objects`` and return the messages the page then shows."""
    response = client.post(changelist(model), {"action": action, "_selected_action": [obj.pk for obj in objects]},
                           follow=True)
    assert response.redirect_chain[0][1] == 302
    return [str(message) for message in response.context["messages"]]
