"""The chat admin: staff read sessions with their messages inline and read messages; nothing is added or edited."""
import pytest
from django.urls import reverse

from apps.chat.models import ChatMessage
from apps.chat.services import chat_send

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


def test_staff_read_sessions_with_their_messages(staff, user, pet_memories, no_llm, django_assert_max_num_queries):
    for query in ("What is my cat called?", "When is the vet?"):
        chat_send(actor=user, query=query)
    with django_assert_max_num_queries(8):
        changelist = staff.get(reverse("admin:chat_chatsession_changelist"))
    assert changelist.status_code == 200 and b"When is the vet?" in changelist.content
    session = user.chat_sessions.get(title="What is my cat called?")
    page = staff.get(reverse("admin:chat_chatsession_change", args=[session.pk]))
    assert page.status_code == 200
    assert b"My cat is named Miso" in page.content  # the extractive answer, inline
    assert b'name="_save"' not in page.content  # read-only
    message = ChatMessage.objects.filter(session=session, role="assistant").get()
    assert staff.get(reverse("admin:chat_chatmessage_change", args=[message.pk])).status_code == 200
    assert staff.get(reverse("admin:chat_chatmessage_changelist"), {"role": "assistant"}).status_code == 200
    assert staff.get(reverse("admin:chat_chatsession_add")).status_code == 403
