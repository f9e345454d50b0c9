// Drives agent_smith's web app with AG-UI's own client (@ag-ui/client HttpAgent, which
// verifies the order of events): node web_agui_client.mjs BASE_URL THREAD_ID
// Runs a message, then one whose tool call needs approval (the run ends with an
// interrupt), resumes it approved, and prints every event and the agent's messages as JSON.
import { HttpAgent } from "@ag-ui/client";

const [base, threadId] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/api/agui`, threadId });
const events = [];
const outcomes = [];
const subscriber = {
  onEvent: ({ event }) => { events.push(event.type); },
  onRunFinishedEvent: ({ outcome, interrupts, result }) => { outcomes.push({ outcome, interrupts, result }); },
};

async function say(text) {
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  return agent.runAgent({}, subscriber);
}

const first = await say("What is the weather in Paris?");
await say("Save a note saying hello.");
const interrupts = agent.pendingInterrupts.map((i) => ({ ...i }));
const resumed = await agent.runAgent(
  { resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } })) },
  subscriber,
);
console.log(JSON.stringify({ first: first.result, resumed: resumed.result, interrupts, outcomes, events, messages: agent.messages }));
