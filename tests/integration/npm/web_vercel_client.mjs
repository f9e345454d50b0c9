// Drives agent_smith's web app with the Vercel AI SDK's own chat client (package `ai`),
// the code behind useChat: node web_vercel_client.mjs BASE_URL CHAT_ID
// Sends a message, then another whose tool call needs approval, approves it (the client
// re-sends by itself: sendAutomaticallyWhen), and prints the chat's messages as JSON.
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { Chat } from "./chat_state.mjs";

const [base, chatId] = process.argv.slice(2);
const errors = [];
let finished = () => {};
const chat = new Chat({
  id: chatId,
  transport: new DefaultChatTransport({ api: `${base}/api/chat` }),
  sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  onError: (error) => errors.push(String(error)),
  onFinish: () => finished(),
});
const nextFinish = () => new Promise((resolve) => { finished = resolve; });

await chat.sendMessage({ text: "What is the weather in Paris?" });
const afterFirst = structuredClone(chat.messages);

await chat.sendMessage({ text: "Save a note saying hello." });
const waiting = chat.messages.at(-1).parts.find((p) => p.state === "approval-requested");
const afterPause = structuredClone(chat.messages);
if (waiting) {
  const done = nextFinish();
  await chat.addToolApprovalResponse({ id: waiting.approval.id, approved: true });
  await done;
}
console.log(JSON.stringify({ afterFirst, afterPause, messages: chat.messages, status: chat.status, errors }));
