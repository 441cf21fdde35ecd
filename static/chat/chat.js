// The chat page's streamed answers (templates/chat/chat.html, apps/chat/views.py chat_stream_view). When the page
// offers a stream (form[data-stream-url], a model is configured), asking posts the form there and shows the answer
// as its server-sent events arrive: "token" events add text, "done" means it is stored (the page then opens the
// conversation at it), "error" means the model failed and nothing was stored. Without this script the form posts.
const chatForm = document.querySelector("form[data-stream-url]");

function turn(role, text) {
  const item = document.createElement("li");
  item.className = `turn turn-${role}`;
  const who = document.createElement("div");
  who.className = "turn-who";
  who.textContent = role === "user" ? "You" : "Engram";
  const body = document.createElement("div");
  body.className = "turn-text";
  body.textContent = text;
  item.append(who, body);
  document.getElementById("turns").append(item);
  return item;
}

function clearErrors() {
  chatForm.querySelectorAll(".stream-error").forEach((node) => node.remove());
  chatForm.querySelectorAll(".field-invalid").forEach((node) => node.classList.remove("field-invalid"));
}

function showFieldErrors(error) {
  for (const [name, messages] of Object.entries(error.fields || {})) {
    const input = chatForm.querySelector(`[name="${name}"]`);
    const field = input && input.closest(".field");
    if (!field) continue;
    field.classList.add("field-invalid");
    const note = document.createElement("p");
    note.className = "field-error stream-error";
    note.id = `id_${name}_error`;
    note.textContent = messages.join(" ");
    (field.querySelector("fieldset") || input).after(note);
    input.setAttribute("aria-describedby", note.id);
  }
  for (const message of error.non_field || []) alertAboveForm(message);
}

function alertAboveForm(message) {
  const note = document.createElement("p");
  note.className = "message message-error stream-error";
  note.setAttribute("role", "alert");
  note.textContent = message;
  chatForm.prepend(note);
}

// Yields [event, data] for each server-sent event of the response's body.
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      yield [name, JSON.parse(data || "{}")];
    }
  }
}

function openAnswer(url) {
  const next = new URL(url, window.location.href);
  if (next.pathname + next.search === window.location.pathname + window.location.search) {
    window.location.hash = next.hash; // same page: only the hash would change, so load it again
    window.location.reload();
  } else {
    window.location.assign(next);
  }
}

async function ask(event) {
  event.preventDefault();
  clearErrors();
  const data = new FormData(chatForm);
  const button = chatForm.querySelector("button[type=submit]");
  button.disabled = true;
  button.textContent = "Answering…";
  const question = turn("user", String(data.get("query") || "").trim());
  const answer = turn("assistant", "");
  answer.classList.add("turn-streaming");
  answer.setAttribute("aria-busy", "true");
  const text = answer.querySelector(".turn-text");
  const fail = (message) => {
    answer.classList.remove("turn-streaming");
    answer.classList.add("turn-failed");
    answer.removeAttribute("aria-busy");
    const note = document.createElement("p");
    note.className = "field-error stream-failure";
    note.setAttribute("role", "alert");
    note.textContent = `The answer failed: ${message} Nothing was stored; ask again.`;
    answer.append(note);
    button.disabled = false;
    button.textContent = "Ask";
  };
  let response;
  try {
    response = await fetch(chatForm.dataset.streamUrl, { method: "POST", body: data, headers: { Accept: "text/event-stream" } });
  } catch {
    fail("the server could not be reached.");
    return;
  }
  if (response.status === 400) {
    question.remove();
    answer.remove();
    showFieldErrors((await response.json()).error);
    button.disabled = false;
    button.textContent = "Ask";
    return;
  }
  if (!response.ok) {
    fail(response.status === 404 ? "this conversation no longer exists." : `the server answered HTTP ${response.status}.`);
    return;
  }
  try {
    for await (const [name, payload] of events(response)) {
      if (name === "token") text.textContent += payload.text;
      else if (name === "done") {
        answer.removeAttribute("aria-busy");
        openAnswer(payload.url);
        return;
      } else if (name === "error") {
        fail(payload.message);
        return;
      }
    }
  } catch {
    fail("the connection broke while the answer was being written.");
    return;
  }
  fail("the answer stopped before it was finished.");
}

if (chatForm) chatForm.addEventListener("submit", ask);
