// The AI SDK's chat client (package `ai`, the code behind useChat) with plain in-memory
// state, as a framework binding (React's useChat) gives it: for the tests' Node scripts.
import { AbstractChat } from "ai";

class State {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
  }
  pushMessage(message) { this.messages = this.messages.concat(message); }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(index, message) {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  }
  snapshot(thing) { return structuredClone(thing); }
}

export class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new State() }); }
}
