// A client whose connection drops mid-reply, then resumes, with the protocols' own clients:
// node web_resume_client.mjs BASE_URL vercel|agui ID [MARKER]
// The fetch given to the client cuts the first response after the reply's first word with
// the TypeError a lost network gives. vercel: the AI SDK's chat client (the code behind useChat)
// then calls resumeStream(), which GETs /api/chat/ID/stream and replays the turn;
// agui: HttpAgent runs the same runId again, which follows that run instead of starting one.
// Prints what each client ended with as JSON.
import { DefaultChatTransport } from "ai";
import { Chat } from "./web_vercel_chat.mjs";
import { HttpAgent } from "@ag-ui/client";

const [base, mode, id, marker] = process.argv.slice(2);

// A rejection the client leaves unhandled after a drop is what a browser logs and lives on
// after; it is reported, not fatal.
const unhandled = [];
process.on("unhandledRejection", (error) => unhandled.push(String(error)));

// A fetch whose first streamed POST breaks, as a dropped connection does, on the read after
// the one that brought `marker` (the first word of the reply, sent before the model waits;
// MARKER instead when given: a durable turn sends a reply whole, so its client drops earlier).
function droppingFetch(marker) {
  let dropped = false;
  return async (url, init) => {
    const response = await fetch(url, init);
    if (dropped || !response.body || (init?.method ?? "GET") !== "POST") return response;
    dropped = true;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    const body = new ReadableStream({
      async pull(controller) {
        if (seen.includes(marker)) {
          reader.cancel().catch(() => {});
          controller.error(new TypeError("network error"));
          return;
        }
        const { value, done } = await reader.read();
        if (done) { controller.close(); return; }
        seen += decoder.decode(value, { stream: true });
        controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

async function vercel() {
  const errors = [];
  const chat = new Chat({
    id,
    transport: new DefaultChatTransport({ api: `${base}/api/chat`, fetch: droppingFetch(marker ?? '"text-delta"') }),
    onError: (error) => errors.push(String(error)),
  });
  await chat.sendMessage({ text: "Tell me a story." });
  const afterDrop = { status: chat.status, messages: structuredClone(chat.messages) };
  await chat["~resumeStreamIfDisconnected"]();
  return { afterDrop, messages: chat.messages, status: chat.status, errors };
}

async function agui() {
  const agent = new HttpAgent({ url: `${base}/api/agui`, threadId: id, fetch: droppingFetch(marker ?? "TEXT_MESSAGE_CONTENT") });
  const events = [];
  const subscriber = { onEvent: ({ event }) => { events.push({ ...event }); } };
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "Tell me a story." });
  const runId = "run-" + id;
  let firstError = null;
  try {
    await agent.runAgent({ runId }, subscriber);
  } catch (error) {
    firstError = String(error);
  }
  const beforeResume = events.length;
  const resumed = await agent.runAgent({ runId }, subscriber);
  return { firstError, beforeResume, events, result: resumed.result, messages: agent.messages };
}

const out = mode === "vercel" ? await vercel() : await agui();
console.log(JSON.stringify({ ...out, unhandled }));
