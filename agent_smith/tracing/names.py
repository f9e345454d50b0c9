"""Span, attribute and event names: the OpenTelemetry GenAI and MCP conventions, and ours.

The ``gen_ai.*``, ``mcp.*``, ``server.*``, ``network.*``, ``jsonrpc.*``,
``rpc.*`` and ``error.type`` names are the semantic conventions' (GenAI spans
and agent spans, MCP spans; development status, latest revision). Names under
``agent_smith.*`` are this library's own, for what the conventions do not
cover. ``docs/tracing.md`` lists where each one appears.
"""

from __future__ import annotations

# -- operations (gen_ai.operation.name, and the first word of span names) ----
INVOKE_AGENT = "invoke_agent"
CHAT = "chat"
EXECUTE_TOOL = "execute_tool"

# -- GenAI ---------------------------------------------------------------------
OPERATION_NAME = "gen_ai.operation.name"
PROVIDER_NAME = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_TEMPERATURE = "gen_ai.request.temperature"
REQUEST_TOP_P = "gen_ai.request.top_p"
REQUEST_TOP_K = "gen_ai.request.top_k"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STOP_SEQUENCES = "gen_ai.request.stop_sequences"
REQUEST_SEED = "gen_ai.request.seed"
REQUEST_FREQUENCY_PENALTY = "gen_ai.request.frequency_penalty"
REQUEST_PRESENCE_PENALTY = "gen_ai.request.presence_penalty"
REQUEST_CHOICE_COUNT = "gen_ai.request.choice.count"
OUTPUT_TYPE = "gen_ai.output.type"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
PROMPT_NAME = "gen_ai.prompt.name"

# Content: recorded only with Runtime(trace_content=True), always redacted.
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT = "gen_ai.tool.call.result"

# Sampling fields of a chat-completions body and the attribute each one sets.
SAMPLING: dict[str, str] = {
    "temperature": REQUEST_TEMPERATURE,
    "top_p": REQUEST_TOP_P,
    "top_k": REQUEST_TOP_K,
    "max_tokens": REQUEST_MAX_TOKENS,
    "max_completion_tokens": REQUEST_MAX_TOKENS,
    "stop": REQUEST_STOP_SEQUENCES,
    "seed": REQUEST_SEED,
    "frequency_penalty": REQUEST_FREQUENCY_PENALTY,
    "presence_penalty": REQUEST_PRESENCE_PENALTY,
    "n": REQUEST_CHOICE_COUNT,
}

# -- MCP, JSON-RPC, network -----------------------------------------------------
MCP_METHOD_NAME = "mcp.method.name"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

# -- ours -----------------------------------------------------------------------
AGENT_DEPTH = "agent_smith.agent.depth"
STOP_CONDITION = "agent_smith.agent.stop_condition"
PAUSED = "agent_smith.agent.paused"
RESUMED = "agent_smith.agent.resumed"
MCP_SERVER = "agent_smith.mcp.server"
MCP_TRANSPORT = "agent_smith.mcp.transport"
USAGE_COST = "agent_smith.usage.cost"
RETRY_EVENT = "agent_smith.retry"
RETRY_ATTEMPT = "agent_smith.retry.attempt"
RETRY_DELAY = "agent_smith.retry.delay"
APPROVAL_EVENT = "agent_smith.approval"
GUARDRAIL_EVENT = "agent_smith.guardrail"
COMPACTION_EVENT = "agent_smith.context.compacted"
COMPACTION_REPLACED = "agent_smith.context.replaced_messages"
COMPACTION_KEPT = "agent_smith.context.kept_messages"
COMPACTION_TOKENS_BEFORE = "agent_smith.context.tokens_before"
COMPACTION_TOKENS_AFTER = "agent_smith.context.tokens_after"
GUARDRAIL_NAME = "agent_smith.guardrail.name"
GUARDRAIL_STAGE = "agent_smith.guardrail.stage"
GUARDRAIL_ACTION = "agent_smith.guardrail.action"
APPROVAL_DECISION = "agent_smith.approval.decision"
# One run of one eval case (agent_smith.evals): the span's name and attributes.
EVAL_CASE_SPAN = "eval_case"
EVAL_CASE = "agent_smith.eval.case"
EVAL_REPEAT = "agent_smith.eval.repeat"

# error.type values of our own (exceptions otherwise give their class name).
TIMEOUT = "timeout"
CANCELLED = "cancelled"
TOOL_ERROR = "tool_error"
INVALID_TOOL_CALL = "invalid_tool_call"
