// Media both ways through agent_smith's web app with AG-UI's own client (@ag-ui/client):
// node web_agui_files.mjs BASE_URL THREAD_ID PNG_BASE64
// Runs a user message whose content is text and an image part; the agent's tool answers
// with an image, whose TOOL_CALL_RESULT content is a list of parts. Prints the messages.
import { HttpAgent } from "@ag-ui/client";

const [base, threadId, png] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/api/agui`, threadId });
const events = [];
agent.addMessage({
  id: crypto.randomUUID(),
  role: "user",
  content: [
    { type: "text", text: "Draw this as a chart." },
    { type: "image", source: { type: "data", value: png, mimeType: "image/png" } },
  ],
});
const run = await agent.runAgent({}, { onEvent: ({ event }) => { events.push(event.type); } });
console.log(JSON.stringify({ result: run.result, events, messages: agent.messages }));
