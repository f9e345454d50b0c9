// Files both ways through agent_smith's web app with the Vercel AI SDK's chat client (`ai`):
// node web_vercel_files.mjs BASE_URL CHAT_ID PNG_BASE64
// Sends a question with a PNG as a file part; the agent's tool answers with an image,
// which comes back as a file part. Prints the chat's messages as JSON.
import { DefaultChatTransport } from "ai";
import { Chat } from "./web_vercel_chat.mjs";

const [base, chatId, png] = process.argv.slice(2);
const errors = [];
const chat = new Chat({
  id: chatId,
  // Only the new message: the server keeps the conversation, so earlier images need not travel again.
  transport: new DefaultChatTransport({
    api: `${base}/api/chat`,
    prepareSendMessagesRequest: ({ id, messages, trigger }) => ({ body: { id, messages: messages.slice(-1), trigger } }),
  }),
  onError: (error) => errors.push(String(error)),
});

const file = { type: "file", mediaType: "image/png", filename: "red.png", url: `data:image/png;base64,${png}` };
await chat.sendMessage({ text: "Draw this as a chart.", files: [file] });
console.log(JSON.stringify({ messages: chat.messages, status: chat.status, errors }));
