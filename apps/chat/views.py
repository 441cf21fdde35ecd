"""The chat page (/chat/): your conversations on the left, the current one in the middle, and a form to ask.
Each answer shows the memories it was built from, with their relevance, each linked to its page, and which
backend answered (the configured model, or extractively with the note on configuring one) with its tokens.

As on every page (apps/core/pages.py), a view parses with a form, calls one service or
selector and renders. Another user's session is the 404 page; the service's complaints (an empty question,
top_k out of range, an unreachable model) go next to their field or above the form. Asking and clearing are
POSTs with the CSRF token (the page redirects after asking, so reloading it does not ask again); clearing
asks first.
"""
from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from apps.chat.forms import ChatForm
from apps.chat.llm import NO_MODEL_NOTE
from apps.chat.models import ChatMessage
from apps.chat.selectors import ChatHistory, chat_history, chat_session_get, chat_session_latest, chat_session_list
from apps.chat.services import chat_clear, chat_send
from apps.core.exceptions import DomainError, NotFound
from apps.core.forms import add_service_error
from apps.core.pages import not_found_is_404
from apps.cubes.selectors import cube_list
from apps.memories.selectors import memories_readable

HISTORY_PAGE = 100  # messages shown at once; the latest ones unless ?offset= asks for earlier
SESSIONS_SHOWN = 50


@login_required
@require_GET
def chat_index(request):
    """Go on with the latest conversation, or start the first one."""
    latest = chat_session_latest(actor=request.user)
    if latest is not None:
        return redirect("chat:session", session_id=latest.pk)
    return _conversation(request, session_id=None)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def chat_new(request):
    """An empty conversation; the first question (a POST) starts the session."""
    return _conversation(request, session_id=None)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def chat_session(request, session_id: str):
    return _conversation(request, session_id=session_id)


@login_required
@require_http_methods(["GET", "POST"])
@not_found_is_404
def chat_clear_view(request, session_id: str):
    """Ask, then delete the conversation and all its messages for good."""
    session = chat_session_get(actor=request.user, session_id=session_id)
    if request.method == "POST":
        chat_clear(actor=request.user, session_id=session.pk)
        messages.success(request, f"Conversation “{session.title}” cleared.")
        return redirect("chat:new")
    return render(request, "chat/confirm_clear.html", {"session": session})


def _conversation(request, *, session_id: str | None) -> HttpResponse:
    cubes = list(cube_list(actor=request.user))
    form = ChatForm(request.POST or None, cubes=cubes, initial={
        "cubes": request.GET.getlist("cube"), **({"top_k": request.GET["top_k"]} if "top_k" in request.GET else {}),
    })
    if request.method == "POST" and form.is_valid():
        try:
            reply = chat_send(actor=request.user, session_id=session_id, **form.service_arguments())
        except DomainError as error:
            if isinstance(error, NotFound) and error.extra.get("field") == "session_id":
                raise  # cleared meanwhile, or never theirs
            add_service_error(form, error)
        else:
            # Back to the page (a reload must not ask again), keeping the chosen cubes and top_k for the next one.
            top_k = form.cleaned_data["top_k"]
            keep = urlencode([("cube", cube_id) for cube_id in form.cleaned_data["cubes"]]
                             + ([("top_k", top_k)] if top_k is not None else []))
            return redirect(f"{reverse('chat:session', args=[reply.session.pk])}?{keep}#message-{reply.message.pk}")
    # Read after asking: an answered question redirects, so its page is read once, on the GET that follows.
    history = _history(request, session_id) if session_id else None
    return render(request, "chat/chat.html", {
        "form": form, "session": history.session if history else None, "history": history,
        "turns": _turns(request, history.messages) if history else [],
        "earlier_offset": max(0, history.offset - HISTORY_PAGE) if history and history.offset else None,
        "sessions": chat_session_list(actor=request.user)[:SESSIONS_SHOWN],
    })


def _history(request, session_id: str) -> ChatHistory:
    """The latest HISTORY_PAGE messages, or those from ?offset= on."""
    raw = request.GET.get("offset", "")
    return chat_history(actor=request.user, session_id=session_id, limit=HISTORY_PAGE,
                        offset=int(raw) if raw.isdigit() else None)


def _turns(request, page: list[ChatMessage]) -> list[dict]:
    """Each message with what the page shows of it: an answer's memories (the ones still readable, fetched in
    one query, linked to their page) with relevance, and the extractive note set apart from the answer."""
    ids = {record["memory_id"] for message in page for record in message.context_used}
    readable = {str(memory.pk): memory for memory in memories_readable(actor=request.user).filter(pk__in=ids)}
    turns = []
    for message in page:
        text, note = message.content, ""
        if message.method == ChatMessage.Method.EXTRACTIVE and text.endswith(NO_MODEL_NOTE):
            text, note = text.removesuffix(NO_MODEL_NOTE).rstrip(), NO_MODEL_NOTE
        used = [{"number": number, "memory": readable.get(record["memory_id"]), "cube_id": record["cube_id"],
                 "relevance": record["relevance_score"]}
                for number, record in enumerate(message.context_used, start=1)]
        turns.append({"message": message, "text": text, "note": note, "used": used})
    return turns
