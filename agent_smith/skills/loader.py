"""``load_skill``: a Skill from a folder holding ``skill.json`` or ``SKILL.md``.

``skill.json`` (seed §12.2) is an object with:

* ``name`` (required): the skill name (see ``normalize_skill_name``);
* ``system_prompt_file`` (required): UTF-8 text file, relative to the folder;
* ``context_file`` (optional): JSON file, relative to the folder, whose value
  becomes ``context_data``;
* ``description`` (optional): one line for humans and UIs;
* ``mcp_servers`` (optional): a list of ``ServerConfig`` objects (``alias``
  plus ``command`` or ``url``, ...), each connected while loading. In the
  strings of ``command``, ``cwd`` and ``env``, ``${PYTHON}`` becomes the
  interpreter running this process (``sys.executable``: the one that has
  your packages, which a bare ``python`` on PATH may not be) and
  ``${SKILL_DIR}`` the skill folder's absolute path; a relative ``cwd`` is
  taken from the skill folder.

A ``SKILL.md`` folder (the widely used open format) has front matter with
``name`` and ``description``; the body is the system prompt. Other front
matter keys are ignored, and so are the folder's other files.

Prompt and context paths must stay inside the skill folder: absolute paths,
``..`` and symlinks that resolve outside are refused. Every problem raises
:class:`SkillError` naming the file and what is wrong, and leaves no MCP
server running. Manifest-defined code tools are out of scope (seed §12.2):
loading a skill never imports Python from its folder. It does start the
processes its ``mcp_servers`` name, so load only skills you trust.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from .._internal import json_input
from ..base.plain_data import json_type
from ..errors import AgentSmithError, ConfigError, ParseError, SkillError
from ..mcp.config import ServerConfig
from .frontmatter import parse_front_matter
from .skill import Skill, adopt_clients, close_clients, normalize_skill_name

if TYPE_CHECKING:
    from ..mcp.client import McpClient
    from ..mcp.events import McpHook
    from ..runtime import Runtime

log = logging.getLogger("agent_smith.skill")

MANIFEST_FILE = "skill.json"
SKILL_MD_FILE = "SKILL.md"
_MANIFEST_KEYS = frozenset(
    {"name", "description", "system_prompt_file", "context_file", "mcp_servers"}
)


def load_skill(
    directory: str | os.PathLike[str],
    *,
    runtime: Runtime | None = None,
    hook: McpHook | None = None,
) -> Skill:
    """Load the skill in ``directory`` (``skill.json`` first, else ``SKILL.md``).

    MCP servers listed in ``skill.json`` are connected with ``runtime`` and
    ``hook``; the returned skill owns those clients: close it (or use it as a
    context manager) when done.
    """
    folder = Path(directory)
    label = folder.name or str(folder)
    if not folder.is_dir():
        raise SkillError(
            f"{folder}: skill folder does not exist or is not a folder", skill_name=label
        )
    folder = folder.resolve()
    manifest = folder / MANIFEST_FILE
    if manifest.exists():
        return _ManifestLoader(folder, manifest, label).load(runtime=runtime, hook=hook)
    skill_md = folder / SKILL_MD_FILE
    if skill_md.exists():
        return _load_skill_md(folder, skill_md, label)
    raise SkillError(
        f"{folder}: no {MANIFEST_FILE} or {SKILL_MD_FILE} in the skill folder", skill_name=label
    )


def _read_text(path: Path, *, skill_name: str, what: str = "") -> str:
    """The file as UTF-8 text; a SkillError naming ``what`` (or the path) otherwise."""
    prefix = what or str(path)
    try:
        data = path.read_bytes()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise SkillError(f"{prefix}: cannot read {path}: {reason}", skill_name=skill_name) from err
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise SkillError(
            f"{prefix}: {path} is not UTF-8 text (bad byte at offset {err.start})",
            skill_name=skill_name,
        ) from err


def _parse_json(text: str, *, path: Path, skill_name: str, what: str = "") -> Any:
    try:
        return json_input.loads(text)
    except json.JSONDecodeError as err:
        prefix = what or str(path)
        where = "" if not what else f" in {path}"
        raise SkillError(
            f"{prefix}: invalid JSON{where} at line {err.lineno} column {err.colno}: {err.msg}",
            skill_name=skill_name,
        ) from err


def _confined(folder: Path, relative: str) -> Path | str:
    """``folder / relative`` if it stays inside ``folder``, else why not."""
    if (
        PurePosixPath(relative).is_absolute()
        or PureWindowsPath(relative).is_absolute()
        or PureWindowsPath(relative).drive
    ):
        return "must be a path relative to the skill folder, not an absolute path"
    if ".." in PurePosixPath(relative.replace("\\", "/")).parts:
        return "must not leave the skill folder ('..')"
    target = (folder / relative).resolve()
    try:
        target.relative_to(folder)
    except ValueError:
        return "resolves outside the skill folder (through a symlink)"
    return target


class _ManifestLoader:
    """Reads and checks one ``skill.json``; connects its MCP servers last."""

    def __init__(self, folder: Path, manifest: Path, label: str) -> None:
        self.folder = folder
        self.manifest = manifest
        self.name = label  # the folder name until the manifest's name is known

    def fail(self, problem: str) -> SkillError:
        return SkillError(f"{self.manifest}: {problem}", skill_name=self.name)

    def load(self, *, runtime: Runtime | None, hook: McpHook | None) -> Skill:
        data = self.read_manifest()
        name = self.required(data, "name")
        self.name = name
        try:
            normalize_skill_name(name)
        except SkillError as err:
            raise self.fail(str(err)) from err
        description = self.field(data, "description") or ""
        prompt_file = self.required(data, "system_prompt_file")
        prompt = _read_text(
            self.path_of("system_prompt_file", prompt_file),
            skill_name=name,
            what=f"{self.manifest}: system_prompt_file",
        )
        context: Any = None
        context_file = self.field(data, "context_file")
        if context_file is not None:
            path = self.path_of("context_file", context_file)
            what = f"{self.manifest}: context_file"
            text = _read_text(path, skill_name=name, what=what)
            context = _parse_json(text, path=path, skill_name=name, what=what)
        configs = self.server_configs(data.get("mcp_servers"))
        # Everything else is checked before any server starts, so a bad
        # manifest never leaves a process behind.
        clients = self.connect(configs, runtime=runtime, hook=hook)
        skill = Skill(
            name=name,
            system_prompt=prompt,
            mcp_clients=tuple(clients),
            context_data=context,
            description=description,
        )
        return adopt_clients(skill, clients)

    def read_manifest(self) -> dict[str, Any]:
        text = _read_text(self.manifest, skill_name=self.name)
        data = _parse_json(text, path=self.manifest, skill_name=self.name)
        if not isinstance(data, dict):
            raise self.fail("the manifest must be a JSON object")
        unknown = sorted(set(data) - _MANIFEST_KEYS)
        if unknown:
            log.warning("%s: ignoring unknown keys %s", self.manifest, ", ".join(unknown))
        return data

    def field(self, data: Mapping[str, Any], key: str) -> str | None:
        """An optional string field (``null`` counts as absent)."""
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail(f"field {key!r} must be a string, got {json_type(value)}")
        return value

    def required(self, data: Mapping[str, Any], key: str) -> str:
        value = self.field(data, key)
        if value is None:
            raise self.fail(f"missing required field {key!r}")
        if not value.strip():
            raise self.fail(f"field {key!r} must not be empty")
        return value

    def path_of(self, key: str, relative: str) -> Path:
        if not relative.strip():
            raise self.fail(f"field {key!r} must not be empty")
        target = _confined(self.folder, relative)
        if isinstance(target, str):
            raise self.fail(f"{key} {relative!r} {target}")
        return target

    def server_configs(self, entries: Any) -> list[ServerConfig]:
        if entries is None:
            return []
        if not isinstance(entries, list):
            raise self.fail(f"field 'mcp_servers' must be a list, got {json_type(entries)}")
        configs: list[ServerConfig] = []
        for index, entry in enumerate(entries):
            where = f"mcp_servers[{index}]"
            if not isinstance(entry, dict):
                raise self.fail(f"{where} must be an object, got {json_type(entry)}")
            try:
                config = ServerConfig.from_dict(self.expand(entry))
            except ConfigError as err:
                raise self.fail(f"{where}: {err}") from err
            if any(c.alias == config.alias for c in configs):
                raise self.fail(f"{where}: duplicate MCP server alias {config.alias!r}")
            configs.append(config)
        return configs

    def expand(self, entry: dict[str, Any]) -> dict[str, Any]:
        """Substitute ``${PYTHON}``/``${SKILL_DIR}``; anchor a relative ``cwd``."""
        out = dict(entry)
        command = out.get("command")
        if isinstance(command, list):
            out["command"] = [self.substitute(v) if isinstance(v, str) else v for v in command]
        env = out.get("env")
        if isinstance(env, dict):
            out["env"] = {
                k: self.substitute(v) if isinstance(v, str) else v for k, v in env.items()
            }
        cwd = out.get("cwd")
        if isinstance(cwd, str):
            out["cwd"] = str(self.folder / self.substitute(cwd))
        return out

    def substitute(self, value: str) -> str:
        if "${PYTHON}" in value and not sys.executable:
            raise self.fail("${PYTHON} is used but this interpreter's path is unknown")
        return value.replace("${PYTHON}", sys.executable).replace("${SKILL_DIR}", str(self.folder))

    def connect(
        self, configs: list[ServerConfig], *, runtime: Runtime | None, hook: McpHook | None
    ) -> list[McpClient]:
        if not configs:
            return []
        from ..mcp.client import McpClient

        clients: list[McpClient] = []
        try:
            for config in configs:
                try:
                    clients.append(McpClient.connect(config, hook=hook, runtime=runtime))
                except (AgentSmithError, OSError) as err:
                    raise self.fail(f"MCP server {config.alias!r} failed to start: {err}") from err
        except BaseException:
            close_clients(clients, skill_name=self.name)
            raise
        return clients


def _load_skill_md(folder: Path, path: Path, label: str) -> Skill:
    text = _read_text(path, skill_name=label)
    try:
        front = parse_front_matter(text)
    except ParseError as err:
        raise SkillError(f"{path}: front matter {err}", skill_name=label) from err
    values: dict[str, str] = {}
    for key in ("name", "description"):
        value = front.fields.get(key)
        if key not in front.fields:
            raise SkillError(f"{path}: front matter is missing {key!r}", skill_name=label)
        if not value or not value.strip():
            raise SkillError(
                f"{path}: front matter {key!r} must be non-empty text", skill_name=label
            )
        values[key] = value.strip()
    try:
        normalize_skill_name(values["name"])
    except SkillError as err:
        raise SkillError(f"{path}: {err}", skill_name=values["name"]) from err
    return Skill(name=values["name"], system_prompt=front.body, description=values["description"])
