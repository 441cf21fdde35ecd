"""The chat page (/chat/): your conversations on the left, the current one in the middle, and a form to ask.
Each answer shows the memories it was built from, with their relevance, each linked to its page, and its tokens;
how answers are made (the configured model, or extractively, with the note on configuring one) is said once,
above the conversation, and on an answer only when another backend made it (an MCP client's model). An answer
that found nothing relevant offers a search for the question instead.

With a configured model the page streams its answers (static/chat/chat.js): the form posts to chat_stream_view,
whose server-sent events carry the answer as the model writes it, then the stored message; the script then
opens the conversation, as the plain form post does. Without JavaScript the form posts and redirects.

As on every page (apps/core/pages.py), a view parses with a form, calls one service or
selector and renders. Another user's session is the 404 page; the service's complaints (an empty question,
top_k out of range, an unreachable model) go next to their field or above the form. Asking and clearing are
POSTs with the CSRF token (the page redirects after asking, so reloading it does not ask again); clearing
asks first.
"""
from __future__ import annotations

import json
import logging
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.chat.forms import ChatForm
from apps.chat.llm import NO_MODEL_HOWTO, NO_MODEL_SUMMARY, STORED_NO_MODEL_NOTE, answer_mode
from apps.chat.models import ChatMessage
from apps.chat.selectors import ChatHistory, chat_history, chat_session_get, chat_session_latest, chat_session_list
from apps.chat.services import ChatTurn, chat_clear, chat_prepare, chat_send, chat_stream
from apps.core.exceptions import DomainError, NotFound
from apps.core.forms import add_service_error
from apps.core.pages import not_found_is_404
from apps.cubes.selectors import cube_list
from apps.memories.selectors import memories_readable
from apps.memories.validation import MAX_QUERY_CHARS

logger = logging.getLogger(__name__)

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
            return redirect(_answer_url(form, reply.session.pk, reply.message.pk))
    # Read after asking: an answered question redirects, so its page is read once, on the GET that follows.
    history = _history(request, session_id) if session_id else None
    mode = answer_mode()
    return render(request, "chat/chat.html", {
        "form": form, "session": history.session if history else None, "history": history,
        "turns": _turns(request, history.messages, mode=mode) if history else [],
        "earlier_offset": max(0, history.offset - HISTORY_PAGE) if history and history.offset else None,
        "sessions": chat_session_list(actor=request.user)[:SESSIONS_SHOWN],
        "mode": mode, "no_model_summary": NO_MODEL_SUMMARY, "no_model_howto": NO_MODEL_HOWTO,
        "stream_url": (reverse("chat:session-stream", args=[session_id]) if session_id else reverse("chat:new-stream"))
        if mode["method"] == "llm" else None,
    })


def _answer_url(form: ChatForm, session_id: str, message_id: int) -> str:
    """The conversation at its new answer, keeping the chosen cubes and top_k for the next question."""
    top_k = form.cleaned_data["top_k"]
    keep = urlencode([("cube", cube_id) for cube_id in form.cleaned_data["cubes"]]
                     + ([("top_k", top_k)] if top_k is not None else []))
    return f"{reverse('chat:session', args=[session_id])}?{keep}#message-{message_id}"


@login_required
@require_POST
@not_found_is_404
def chat_stream_view(request, session_id: str | None = None):
    """The chat form's question answered as server-sent events (text/event-stream), for the page's script:
    ``event: token`` with {"text"} for each piece of the answer as the model writes it, then ``event: done`` with
    {"session_id", "message_id", "url"} once it is stored, or ``event: error`` with {"code", "message"} when the
    model fails (nothing is stored). Bad input is a 400 JSON {"error": {"message", "fields": {field: [messages]}}}
    naming each field, before any event; another user's session is the 404 page."""
    cubes = list(cube_list(actor=request.user))
    form = ChatForm(request.POST, cubes=cubes)
    turn = None
    if form.is_valid():
        try:
            turn = chat_prepare(actor=request.user, session_id=session_id, **form.service_arguments())
        except DomainError as error:
            if isinstance(error, NotFound) and error.extra.get("field") == "session_id":
                raise
            add_service_error(form, error)
    if turn is None:
        fields = {name: list(errors) for name, errors in form.errors.items() if name != "__all__"}
        message = "; ".join(f"{form.fields[name].label}: {' '.join(errors)}" for name, errors in fields.items())
        return JsonResponse({"error": {"code": "invalid_input", "message": message or " ".join(form.non_field_errors()),
                                       "fields": fields, "non_field": list(form.non_field_errors())}}, status=400)
    response = StreamingHttpResponse(_events(turn, form), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy (nginx) must pass each event on as it comes
    return response


async def _events(turn: ChatTurn, form: ChatForm):
    """chat_stream's pieces as server-sent events. Runs on the event loop, after the view has returned."""
    try:
        async for piece in chat_stream(turn):
            if piece.reply is None:
                yield _event("token", {"text": piece.text})
            else:
                reply = piece.reply
                yield _event("done", {"session_id": reply.session.pk, "message_id": reply.message.pk,
                                      "url": _answer_url(form, reply.session.pk, reply.message.pk)})
    except DomainError as error:  # the model failed, or the session was cleared meanwhile
        yield _event("error", {"code": error.code, "message": error.message})
    except Exception:
        logger.exception("chat stream failed")
        yield _event("error", {"code": "internal_error", "message": "The answer failed on the server; nothing "
                                                                    "was stored. Ask again."})


def _event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _history(request, session_id: str) -> ChatHistory:
    """The latest HISTORY_PAGE messages, or those from ?offset= on."""
    raw = request.GET.get("offset", "")
    return chat_history(actor=request.user, session_id=session_id, limit=HISTORY_PAGE,
                        offset=int(raw) if raw.isdigit() else None)


def _turns(request, page: list[ChatMessage], *, mode: dict) -> list[dict]:
    """Each message with what the page shows of it: an answer's memories (the ones still readable, fetched in
    one query, linked to their page) with relevance; whether another backend than the page's made it; and, when
    no memory was relevant, a search for the question it answers."""
    ids = {record["memory_id"] for message in page for record in message.context_used}
    readable = {str(memory.pk): memory for memory in memories_readable(actor=request.user).filter(pk__in=ids)}
    turns, question = [], ""
    for message in page:
        if message.role == ChatMessage.Role.USER:
            question = message.content
            turns.append({"message": message, "text": message.content})
            continue
        # Answers stored before the note was said once per page end with it.
        text = message.content.removesuffix(STORED_NO_MODEL_NOTE).rstrip()
        used = [{"number": number, "memory": readable.get(record["memory_id"]), "cube_id": record["cube_id"],
                 "relevance": record["relevance_score"]}
                for number, record in enumerate(message.context_used, start=1)]
        nothing_relevant = not used
        turns.append({
            "message": message, "text": text, "used": used, "nothing_relevant": nothing_relevant,
            "search_url": f"{reverse('dashboard:search')}?{urlencode({'q': question[:MAX_QUERY_CHARS]})}"
                          if nothing_relevant and question else reverse("dashboard:search"),
            "other_backend": message.method not in (mode["method"], ChatMessage.Method.NONE),
        })
    return turns
