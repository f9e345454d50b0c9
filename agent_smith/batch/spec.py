"""AgentSpec: a recipe for an agent that pickles and loads from JSON.

A batch runs the same agent in many worker processes, possibly on other
machines, so what travels is a recipe of names and settings, never live
objects: the LLM's provider (``"openai"``, the default, ``"anthropic"``, ...;
see :mod:`agent_smith.llm.providers`), base URL and model, the *name* of the environment variable
that holds the API key (each worker reads it; the key never enters the spec,
a pickle or a log), the system prompt, tools and the output type as
importable ``"module:attribute"`` names, MCP :class:`ServerConfig` values, an
:class:`AgentConfig` and :class:`SamplingParams`, and the importable name of
an approver for tool calls that need approval (a batch has no person to ask).
:meth:`AgentSpec.build` turns the recipe into an :class:`Agent`.

The JSON form is an object with the field names as keys; ``base_url`` is
required, everything else optional::

    {"base_url": "http://127.0.0.1:8080", "model": "qwen2.5-7b",
     "api_key_env": "LLAMA_API_KEY", "system_prompt": "Answer in one line.",
     "tools": ["agent_smith.cli.demo_tools:CalculatorTool"],
     "mcp_servers": [{"alias": "web", "url": "http://127.0.0.1:3001/mcp"}],
     "config": {"max_iterations": 8}, "sampling": {"temperature": 0}}
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal import json_input
from ..agent.config import AgentConfig
from ..base.named_file import read_named_file
from ..base.plain_data import from_plain
from ..errors import ConfigError
from ..llm.endpoint import resolve_chat_url
from ..llm.providers import check_provider, make_model
from ..llm.request import SamplingParams
from ..mcp.config import ServerConfig
from ..tools.base import Tool
from .names import check_name, resolve_name

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..agent.approvals import Approver
    from ..agent.events import AgentHooks
    from ..llm.model import ChatModel
    from ..mcp.client import McpClient
    from ..runtime import Runtime

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SCALARS = {
    "base_url": str,
    "model": str,
    "api_key_env": str,
    "system_prompt": str,
    "output_type": str,
    "approver": str,
    "request_timeout": float,
    "provider": str,
}


@dataclass(frozen=True)
class AgentSpec:
    """Everything needed to build the same agent anywhere (see the module doc).

    ``tools`` are importable names of a :class:`Tool` object, a ``Tool``
    subclass (instantiated without arguments) or a plain function (wrapped
    with ``make_tool``). ``output_type`` names the type of the agent's typed
    output, ``approver`` a function deciding on calls that need approval
    (without one such a call pauses the turn, which fails the input). MCP
    servers with OAuth (``auth``) hold live objects and are refused. Lists
    are accepted and stored as tuples.
    """

    base_url: str
    model: str = ""
    api_key_env: str | None = None
    system_prompt: str = ""
    tools: tuple[str, ...] = ()
    mcp_servers: tuple[ServerConfig, ...] = ()
    config: AgentConfig = field(default_factory=AgentConfig)
    sampling: SamplingParams = field(default_factory=SamplingParams)
    request_timeout: float = 60.0
    output_type: str | None = None
    approver: str | None = None
    provider: str = "openai"

    def __post_init__(self) -> None:
        for name in ("tools", "mcp_servers"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if not isinstance(self.base_url, str):
            raise ConfigError("AgentSpec.base_url must be a string")
        resolve_chat_url(self.base_url)  # any provider's base: an http(s) URL
        check_provider(self.provider)
        if self.api_key_env is not None and not _ENV_NAME.match(self.api_key_env):
            raise ConfigError(
                "AgentSpec.api_key_env must name an environment variable (like LLAMA_API_KEY), "
                f"got {self.api_key_env!r}"
            )
        for i, name in enumerate(self.tools):
            check_name(name, what=f"AgentSpec.tools[{i}]")
        for field_name in ("output_type", "approver"):
            if getattr(self, field_name) is not None:
                check_name(getattr(self, field_name), what=f"AgentSpec.{field_name}")
        aliases = [s.alias for s in self.mcp_servers if isinstance(s, ServerConfig)]
        if len(aliases) != len(self.mcp_servers):
            raise ConfigError("AgentSpec.mcp_servers must hold ServerConfig values")
        if len(set(aliases)) != len(aliases):
            raise ConfigError("AgentSpec.mcp_servers: two servers have the same alias")
        for server in self.mcp_servers:
            if server.auth is not None:  # handlers and token stores do not travel to workers
                raise ConfigError(
                    f"AgentSpec.mcp_servers: {server.alias!r} uses OAuth ('auth'), which a "
                    "batch spec cannot carry; give the server 'headers' or a 'bearer_token'"
                )
        if not isinstance(self.config, AgentConfig):
            raise ConfigError("AgentSpec.config must be an AgentConfig")
        if not isinstance(self.sampling, SamplingParams):
            raise ConfigError("AgentSpec.sampling must be a SamplingParams")
        if isinstance(self.request_timeout, bool) or not self.request_timeout > 0:
            raise ConfigError("AgentSpec.request_timeout must be a positive number of seconds")

    # -- JSON ----------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentSpec:
        """Build a spec from its JSON object; ConfigError names the key that is wrong."""
        if not isinstance(data, Mapping):
            raise ConfigError("an agent spec must be a JSON object")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise ConfigError(f"agent spec: unknown key {unknown[0]!r}")
        if "base_url" not in data:
            raise ConfigError("agent spec: missing key 'base_url'")
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            kwargs[key] = _field_from_json(key, value)
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str) -> AgentSpec:
        """Build a spec from JSON text."""
        try:
            data = json_input.loads(text)
        except json.JSONDecodeError as err:
            raise ConfigError(f"agent spec is not valid JSON: {err}") from err
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> AgentSpec:
        """Read a spec from a JSON file; ConfigError names the file and the problem."""
        text = read_named_file(path, "agent spec")
        try:
            return cls.from_json(text)
        except ConfigError as err:
            raise ConfigError(f"{os.fspath(path)}: {err}") from err

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this spec (``from_dict(spec.to_dict()) == spec``)."""
        # Through JSON once, so tuples come back as the lists a JSON file holds.
        data: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(self)))
        return data

    @functools.cached_property
    def key(self) -> str:
        """A digest of the whole recipe: equal specs have equal keys in every process."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]

    # -- building ------------------------------------------------------------

    def resolve_tools(self) -> list[Tool]:
        """Import the tools; ConfigError names one that cannot be imported or used."""
        from ..tools.function import make_tool

        tools: list[Tool] = []
        for i, name in enumerate(self.tools):
            what = f"AgentSpec.tools[{i}]"
            value = resolve_name(name, what=what)
            if isinstance(value, Tool):
                tools.append(value)
            elif isinstance(value, type) and issubclass(value, Tool):
                tools.append(value())
            elif callable(value):
                tools.append(make_tool(value))
            else:
                raise ConfigError(f"{what} {name!r} is not a tool, a Tool class or a function")
        return tools

    def resolve_output_type(self) -> Any:
        """Import the output type (``None`` without one); ConfigError if it is not a type.

        A class or a typing construct (``list[Invoice]``, a ``Literal``) named
        by a module attribute both count.
        """
        if self.output_type is None:
            return None
        value = resolve_name(self.output_type, what="AgentSpec.output_type")
        if not isinstance(value, type) and typing.get_origin(value) is None:
            raise ConfigError(f"AgentSpec.output_type {self.output_type!r} is not a type")
        return value

    def resolve_approver(self) -> Approver | None:
        """Import the approver (``None`` without one); ConfigError if it is not callable."""
        if self.approver is None:
            return None
        value = resolve_name(self.approver, what="AgentSpec.approver")
        if not callable(value):
            raise ConfigError(f"AgentSpec.approver {self.approver!r} is not a function")
        return typing.cast("Approver", value)

    def api_key(self) -> str | None:
        """The API key from the environment variable ``api_key_env`` (in this process)."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"AgentSpec.api_key_env: the environment variable {self.api_key_env} is not set"
            )
        return key

    def make_llm(self, *, runtime: Runtime | None = None) -> ChatModel:
        """The chat model of this spec (its API key read from the environment here)."""
        return make_model(
            self.provider,
            self.base_url,
            self.model,
            api_key=self.api_key(),
            request_timeout=self.request_timeout,
            default_sampling=self.sampling,
            runtime=runtime,
        )

    def build(
        self,
        *,
        runtime: Runtime | None = None,
        llm: ChatModel | None = None,
        mcp_clients: Sequence[McpClient] | None = None,
        hooks: AgentHooks | None = None,
    ) -> Agent:
        """Make the agent this spec describes (with ``hooks``, if given).

        Without ``llm`` a new client is made (on ``runtime``). Without
        ``mcp_clients`` the spec's MCP servers are connected and owned by the
        agent (``agent.close()`` closes them); given clients are only bound,
        so several agents can share one connection. Raises ConfigError for a
        name that does not import, a missing API key, or a bad setting, and
        the MCP client's errors when a server does not start.
        """
        from ..agent.agent import Agent

        tools = self.resolve_tools()
        agent = Agent(
            llm if llm is not None else self.make_llm(runtime=runtime),
            self.system_prompt,
            tools,
            config=self.config,
            hooks=hooks,
            runtime=runtime,
            approver=self.resolve_approver(),
            output_type=self.resolve_output_type(),
        )
        try:
            if mcp_clients is None:
                for server in self.mcp_servers:
                    agent.connect_mcp(server)
            else:
                for client in mcp_clients:
                    agent.add_mcp_client(client)
        except BaseException:
            agent.close()
            raise
        return agent


def _field_from_json(key: str, value: Any) -> Any:
    where = f"agent spec: {key!r}"
    if key == "config":
        return from_plain(AgentConfig, value, where="agent spec: config")
    if key == "sampling":
        return from_plain(SamplingParams, value, where="agent spec: sampling")
    if key == "tools":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where} must be a list of strings")
        return tuple(value)
    if key == "mcp_servers":
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list of MCP server objects")
        configs = []
        for i, entry in enumerate(value):
            try:
                configs.append(ServerConfig.from_dict(entry))
            except ConfigError as err:
                raise ConfigError(f"agent spec: mcp_servers[{i}]: {err}") from err
        return tuple(configs)
    expected = _SCALARS[key]
    if value is None and key in ("api_key_env", "output_type", "approver"):
        return None
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, expected):
        kind = "a number" if expected is float else "a string"
        raise ConfigError(f"{where} must be {kind}")
    return value
