"""Reading `stacks/Pulumi.<stack>.yaml`, the same files `pulumi up` reads.

YAML mistakes (syntax, duplicate keys such as a node pool named twice, an empty file) become
ConfigErrors with the line they are on, like every other configuration problem.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from eks_devices.core.config import project_config
from eks_devices.core.config.errors import article, show
from eks_devices.core.config.stack import NAMED_SECTIONS, NAMESPACE, ConfigError, ConfigProblem, Spec, parse


class StackNotFound(Exception):
    def __init__(self, stack: str, directory: Path, existing: list[str]):
        self.stack, self.directory, self.existing = stack, directory, existing
        listing = ", ".join(existing) if existing else "none"
        super().__init__(f"no stack {stack!r}: {directory / f'Pulumi.{stack}.yaml'} does not exist "
                         f"(stacks here: {listing})")


MAX_BYTES = 1024 * 1024  # a stack file is a few KiB; Pulumi's own config files stay far below this
MAX_ALIASES = 1000  # `*anchor` uses per file: enough to share values, too few to build an alias bomb
MAX_DEPTH = 200  # nested mappings and lists: a stack file needs a dozen; the checks and Pulumi walk values recursively


def _line(text: str, mark: yaml.Mark) -> int:
    """The line a YAML mark is on, counted as editors and GitHub count them (line feeds only: YAML also breaks
    lines at a lone CR, NEL and the Unicode line and paragraph separators, which would shift every later line)."""
    return text.count("\n", 0, mark.index) + 1


class _TooManyAliases(Exception):
    def __init__(self, mark: yaml.Mark):
        self.mark = mark


class _TooDeep(Exception):
    """Collections nested more than MAX_DEPTH levels."""


class _BadKey(Exception):
    """A collection as a mapping key (`? [a, b]`), which no JSON or Pulumi configuration can hold."""

    def __init__(self, mark: yaml.Mark, kind: str):
        self.mark, self.kind = mark, kind


class DuplicateKeys(ConfigError):
    """Keys given twice in one mapping, with the configuration YAML reads anyway (each key's last value),
    so that the rest of the file is checked too (`load_with_config`)."""

    def __init__(self, problems: list[ConfigProblem], source: str, config: dict[str, Any] | None):
        super().__init__(problems, source)
        self.config = config


class _BadTag(Exception):
    """A scalar its YAML tag cannot hold (`!!bool maybe`, `!!timestamp soon`, `!!int c`), with its line."""

    def __init__(self, mark: yaml.Mark, tag: str, value: str, why: Exception):
        self.mark, self.tag, self.value, self.why = mark, tag, value, why


_STR_TAG = "tag:yaml.org,2002:str"
_TAG_ERRORS = (ValueError, TypeError, OverflowError, KeyError, AttributeError, IndexError)


# libyaml's parser when PyYAML was built with it (its wheels are): ten times faster than the pure-Python
# one on a 1,000-pool stack file (0.05 against 0.52 s CPU), which `check` and every verb pay
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SAFE_LOADER):  # type: ignore[misc,valid-type]
    """A safe loader that records duplicate mapping keys instead of silently keeping the last, and
    raises _BadTag for a scalar its tag cannot hold."""

    duplicates: list[tuple[yaml.Mark, yaml.Mark, Any]]  # where each repeated key is, where it first was, the key

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except _TAG_ERRORS as exc:
            # PyYAML's constructors raise these for a tag that does not fit its value: `!!int c` a
            # ValueError, `!!bool maybe` a KeyError, `!!timestamp soon` an AttributeError
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            raise _BadTag(node.start_mark, tag, str(node.value), exc) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor` merges keys; the base class flattens it, an override is no duplicate
            # a plain text key is its node's value (SafeConstructor.construct_yaml_str): not constructed twice
            key = (key_node.value if key_node.tag == _STR_TAG and isinstance(key_node, yaml.ScalarNode)
                   else self.construct_object(key_node, deep=deep))
            if not isinstance(key, Hashable):
                raise _BadKey(key_node.start_mark, type(key).__name__)
            if key in seen:
                self.duplicates.append((key_node.start_mark, seen[key], key))
            seen.setdefault(key, key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def find_project(start: Path | None = None) -> Path:
    """The nearest directory at or above `start` holding Pulumi.yaml (else `start`)."""
    here = (start or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    return here


class ProjectInvalid(Exception):
    """Pulumi.yaml names no project the Pulumi CLI would run: `given` says what it holds instead."""

    ACCEPTED = "a project name of letters, digits, '-', '_' and '.', at most 100 characters, as the Pulumi CLI requires"

    def __init__(self, path: Path, given: str):
        self.given = given
        super().__init__(f"{path}: {given} (accepted: {self.ACCEPTED})")


def _settings(project: Path) -> Any:
    """The project's Pulumi.yaml, parsed (None when it cannot be read)."""
    try:
        return _parsed((project / "Pulumi.yaml").read_bytes())
    except OSError:
        return None


def _parsed(raw: bytes) -> Any:
    """A Pulumi.yaml's bytes, parsed (None when they are not YAML text)."""
    try:
        return yaml.load(raw.decode("utf-8"), Loader=_SAFE_LOADER)
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError, *_TAG_ERRORS):
        return None


def stacks_dir(project: Path) -> Path:
    """Where the project keeps its stack files: Pulumi.yaml's `stackConfigDir` (or `config` naming a
    folder, its older spelling), else beside it, as the Pulumi CLI does."""
    settings = _settings(project)
    if not isinstance(settings, dict):
        return project
    folder = settings.get("stackConfigDir") or settings.get("config")
    return project / folder if isinstance(folder, str) and folder else project


def program_entry(project: Path) -> Path:
    """What the Pulumi CLI runs as the project's program: Pulumi.yaml's `main` (a folder holding
    `__main__.py`, or a file), relative to the project, else the project's folder
    (pulumi/pulumi v3.276.0 pkg/engine/project.go `getPwdMain`)."""
    settings = _settings(project)
    main = settings.get("main") if isinstance(settings, dict) else None
    return project / main if isinstance(main, str) and main else project


def with_project_config(config: dict[str, Any], project: Path, stack: str,
                        pulumi_yaml: tuple[bytes, str] | None = None) -> dict[str, Any]:
    """A stack's `config:` with what the project's Pulumi.yaml declares under `config:` merged in as
    the Pulumi CLI merges it (`project_config`); ConfigError with every problem. `pulumi_yaml`, the
    bytes of another version of that file and how to name it (a git revision's, for a baseline read
    from one), stands in for the file on disk."""
    settings, source = (_parsed(pulumi_yaml[0]), pulumi_yaml[1]) if pulumi_yaml else (
        _settings(project), str(project / "Pulumi.yaml"))
    declared = settings.get("config") if isinstance(settings, dict) else None
    if declared is None or isinstance(declared, str):  # none, or the older name of the stack files' folder
        return config
    try:
        name = _name_in(settings, project / "Pulumi.yaml")
    except ProjectInvalid as exc:
        raise ConfigError([ConfigProblem("Pulumi.yaml name", exc.given, exc.ACCEPTED)], source) from None
    return project_config.merge(config, declared, name, stack, source)


# Pulumi's stack and project names: letters, digits, '-', '_' and '.', at most 100 characters
# (pulumi/pulumi sdk/go/common/tokens/project.go `ValidateProjectName`, the same rule for stacks).
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def project_name(project: Path) -> str:
    """The project's name, Pulumi.yaml's `name`: part of every URN, and the namespace of the
    program's own configuration (`pulumi.Config()`); the Pulumi CLI runs no project without one."""
    return _name_in(_settings(project), project / "Pulumi.yaml")


def _name_in(settings: Any, path: Path) -> str:
    """The project name a parsed Pulumi.yaml gives, or ProjectInvalid saying what it holds instead."""
    name = settings.get("name") if isinstance(settings, dict) else None
    if not isinstance(name, str) or not STACK_NAME.fullmatch(name):
        raise ProjectInvalid(path, "no readable Pulumi.yaml" if settings is None else f"name {name!r}")
    return name


def stack_names(directory: Path) -> list[str]:
    return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in directory.glob("Pulumi.*.yaml"))


def read_config(path: Path) -> dict[str, Any]:
    """The `config:` mapping of a stack file, or ConfigError describing why it cannot be read."""
    source = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError([ConfigProblem(source, "an unreadable file", f"a readable file ({exc.strerror})")],
                          source) from None
    return config_of(raw, source)


def config_of(raw: bytes, source: str) -> dict[str, Any]:
    """The `config:` mapping of a stack file's bytes (read from disk or from a git revision), or
    ConfigError describing why it cannot be read; `source` names it in the errors."""
    if len(raw) > MAX_BYTES:
        raise ConfigError([ConfigProblem(source, f"a file of {len(raw)} bytes",
                                         f"a stack file of at most {MAX_BYTES} bytes")], source)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise ConfigError([ConfigProblem(f"line {line}",
                                         f"byte {raw[exc.start]:#04x}, which is not UTF-8 text",
                                         "a UTF-8 text file")], source) from None
    loader: _Loader | None = None
    try:
        _refuse_bombs(text)
        loader = _Loader(text)
        loader.duplicates = []
        document = loader.get_single_data()
    except yaml.reader.ReaderError as exc:
        line = text[:exc.position].count("\n") + 1
        raise ConfigError([ConfigProblem(f"line {line}",
                                         f"character #x{exc.character:04x}", f"printable text ({exc.reason})")],
                          source) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {_line(text, mark)}" if mark else source
        line = text.split("\n")[_line(text, mark) - 1] if mark else ""
        accepted = "well-formed YAML" + (": indent with spaces (YAML refuses tabs)" if "\t" in line else "")
        raise ConfigError([ConfigProblem(where, f"invalid YAML ({getattr(exc, 'problem', None) or exc})", accepted)],
                          source) from None
    except _BadKey as exc:
        kind = _KINDS.get(exc.kind, article(exc.kind))
        raise ConfigError([ConfigProblem(f"line {_line(text, exc.mark)}", f"{kind} as a mapping key",
                                         "mapping keys that are text or numbers")], source) from None
    except (RecursionError, _TooDeep):
        raise ConfigError([ConfigProblem(source, "YAML nested too deeply to read",
                                         f"a stack file nested at most {MAX_DEPTH} levels deep")], source) from None
    except _TooManyAliases as exc:
        raise ConfigError([ConfigProblem(f"line {_line(text, exc.mark)}", f"more than {MAX_ALIASES} YAML aliases",
                                         f"at most {MAX_ALIASES} aliases (*name) per stack file")], source) from None
    except _BadTag as exc:
        given = f"{exc.tag} {exc.value!r}, which that YAML tag cannot hold"
        raise ConfigError([ConfigProblem(f"line {_line(text, exc.mark)}", given,
                                         f"a value its tag can hold, or no tag (the YAML reader said: {exc.why!r})")],
                          source) from None
    except _TAG_ERRORS as exc:  # a tag whose error escaped the per-node wrapper (a merged or deep value)
        raise ConfigError([ConfigProblem(source, "a value its YAML tag cannot hold",
                                         f"values that fit their tags (the YAML reader said: {exc!r})")],
                          source) from None
    finally:
        if loader is not None:
            loader.dispose()
    config = document.get("config") if isinstance(document, dict) else None
    if loader.duplicates:
        raise DuplicateKeys(_duplicate_problems(text, loader.duplicates), source,
                            config if isinstance(config, dict) else None)
    if document is None:
        raise ConfigError([ConfigProblem(source, "an empty file", "a mapping with a config: section")], source)
    if not isinstance(document, dict):
        raise ConfigError([ConfigProblem("config", f"{_kind(document)} as the whole file",
                                         "a mapping with a config: mapping of eks-devices:* keys")], source)
    if not isinstance(config, dict):
        given = "no config: section" if "config" not in document else f"config: {_kind(config)}"
        raise ConfigError([ConfigProblem("config", given, "a top-level config: mapping of eks-devices:* keys")],
                          source)
    return config


# how a YAML value that should have been a mapping is named in a problem
_KINDS = {"list": "a list", "str": "text", "int": "a number", "float": "a number", "bool": "true or false",
          "NoneType": "nothing", "dict": "a mapping"}


def _kind(value: Any) -> str:
    return _KINDS.get(type(value).__name__, article(type(value).__name__))


def _duplicate_problems(text: str, duplicates: list[tuple[yaml.Mark, yaml.Mark, Any]]) -> list[ConfigProblem]:
    """A problem per repeated key, at its configuration path (`nodePools.gpu`, `cluster.name`) and line, in the
    file's order."""
    paths = _key_paths(yaml.compose(text, Loader=_SAFE_LOADER))
    problems = []
    for mark, first, key in sorted(duplicates, key=lambda found: (found[0].line, found[0].column)):
        path = paths.get((mark.line, mark.column), [])
        named = len(path) == 2 and path[0] in NAMED_SECTIONS
        why = {"nodePools": "a node pool's name is its identity", "claims": "a claim's name is its object's name",
               "deviceClasses": "a class's name is its object's name"}.get(path[0] if named else "", "")
        line = _line(text, mark)
        problems.append(ConfigProblem(
            ".".join(path) or f"line {line}", f"{key!r} a second time, on line {line} (first on line "
            f"{_line(text, first)})", "each key once: YAML keeps only the last"
            + (f" ({why}: rename one of them)" if why else " (remove one of them)"), line=line))
    return problems


def _key_paths(root: yaml.Node | None) -> dict[tuple[int, int], list[str]]:
    """The configuration path of every mapping key of a composed stack file, by the key's line and column:
    `config` → `eks-devices:nodePools` → `gpu` is `nodePools.gpu` (`aws:region` keeps its namespace); a key
    outside `config:` is named from the top of the file (`config` itself, `environment`)."""
    out: dict[tuple[int, int], list[str]] = {}
    # (node, its path, whether it is the config: mapping itself)
    pending: list[tuple[yaml.Node, list[str], bool]] = [(root, [], False)] if root is not None else []
    seen: set[int] = set()
    while pending:
        node, path, is_config = pending.pop()
        if id(node) in seen:  # an alias names a node already walked
            continue
        seen.add(id(node))
        children = []
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
                here = [name.removeprefix(f"{NAMESPACE}:")] if is_config else [*path, name]
                out[(key.start_mark.line, key.start_mark.column)] = here
                children.append((value, here, node is root and name == "config"))
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, [*path, str(i)], False) for i, item in enumerate(node.value)]
        pending.extend(reversed(children))  # in the file's order: an anchor is walked before its aliases
    return out


def depth_bound(text: str) -> int:
    """An upper bound on how deeply YAML text nests collections, read off the text without parsing it.

    A block collection inside another starts further right, or at the same column only as a sequence
    that is a mapping's value, whose own items start further right: at most two levels per column, and
    no collection starts past the longest line (split at line feeds only: every YAML line lies within one).
    A flow collection opens with `[` or `{`, or is a single-pair mapping inside one: at most two levels each;
    block collections never sit inside flow ones."""
    longest = max(map(len, text.split("\n")))
    return 2 * (longest + 1) + 2 * (text.count("[") + text.count("{"))


def _refuse_bombs(text: str) -> None:
    """Raise _TooManyAliases at the first alias (*name) past MAX_ALIASES: a few anchors referenced
    many times make a document that grows exponentially when it is walked (a "billion laughs"); and
    _TooDeep past MAX_DEPTH nested collections, which would exhaust the recursion of what walks them.
    Text with no `*` (so no alias) that cannot nest that deep (`depth_bound`) is let through unparsed:
    a generated stack file of a thousand pools, ~15 ms of `check`'s CPU."""
    if "*" not in text and depth_bound(text) <= MAX_DEPTH:
        return
    aliases = depth = 0
    for event in yaml.parse(text, Loader=_SAFE_LOADER):
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise _TooManyAliases(event.start_mark)
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _TooDeep
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load(stack: str, directory: Path, project: Path | None = None) -> Spec:
    """Parse `Pulumi.<stack>.yaml` in `directory` into a Spec (with `project`'s Pulumi.yaml config merged in)."""
    return load_with_config(stack, directory, project)[1]


def load_with_config(stack: str, directory: Path, project: Path | None = None) -> tuple[dict[str, Any], Spec]:
    """The stack file's `config:` mapping, with the config `project`'s Pulumi.yaml declares merged in
    when a project is given (`with_project_config`), and the Spec parsed from it, from one read of the
    file: for the verbs that also run the program with that configuration."""
    if not STACK_NAME.fullmatch(stack):
        raise ConfigError([ConfigProblem("stack", repr(stack), "a Pulumi stack name: letters, digits, '-', '_' "
                                                               "and '.', at most 100 characters")], "stack name")
    path = directory / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        raise StackNotFound(stack, directory, stack_names(directory))
    repeated: list[ConfigProblem] = []
    try:
        config = read_config(path)
    except DuplicateKeys as exc:
        if exc.config is None:
            raise
        config, repeated = exc.config, exc.problems  # the rest of the file is checked as YAML reads it
    problems: list[ConfigProblem] = []
    source = str(path)
    try:
        if project is not None:
            config = with_project_config(config, project, stack)
        spec = parse(config, source=str(path))
    except ConfigError as exc:
        problems, source = exc.problems, exc.source
        imported = environments(path)
        if imported:
            problems = [*problems, ConfigProblem(
                "environment", f"imports {', '.join(imported)}", "the keys above in the stack file: offline, nothing "
                "reads what Pulumi ESC environments set (that needs Pulumi Cloud), and they may be keys one of these "
                "sets")]
    if repeated or problems:
        raise ConfigError([*repeated, *problems], source)
    return config, spec


def environments(path: Path) -> list[str]:
    """The Pulumi ESC environments a stack file imports (its `environment:` list), which `pulumi up`
    merges into the stack's configuration and nothing offline can read."""
    try:
        raw = path.read_bytes()
        if b"environment" not in raw:
            return []
        imported = yaml.load(raw, Loader=_SAFE_LOADER).get("environment")
    except (OSError, AttributeError, yaml.YAMLError, RecursionError, *_TAG_ERRORS):
        return []
    if isinstance(imported, list):
        return [str(name) for name in imported]
    return [] if imported is None else [show(imported)]


def line_of(path: Path, config_path: str) -> int:
    """The stack file's line for a configuration path (`nodePools.gpu.instanceTypes.2`): the deepest
    key (or list entry) of the path the file has, else the `config:` line, else 1. For annotations in CI.
    A number steps into a list; a key may hold dots itself (a label such as `eks.amazonaws.com/x`)."""
    if (named := re.fullmatch(r"line (\d+)", config_path)) is not None:  # YAML problems name their line
        return int(named.group(1))
    try:
        text = path.read_bytes().decode("utf-8")  # as read for the problems: no newline translation
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return 1
    head, *rest = config_path.split(".")
    top = _step(text, root, ["config"])
    if top is None:
        return 1
    found = _step(text, top[1], [head if ":" in head else f"{NAMESPACE}:{head}"])
    if found is None:
        return top[0]
    return _deepest(text, found[1], rest, found[0])


def _step(text: str, node: Any, parts: list[str]) -> tuple[int, Any, int] | None:
    """(line, node, parts used) of the entry `parts` lead to from `node` in one step: a list index, or the
    mapping key spelled by the most parts joined with dots (a key that holds dots); None when none does."""
    if isinstance(node, yaml.SequenceNode) and parts[0].isdigit() and int(parts[0]) < len(node.value):
        item = node.value[int(parts[0])]
        return _line(text, item.start_mark), item, 1
    if isinstance(node, yaml.MappingNode):
        keys = {k.value: (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        for used in range(len(parts), 0, -1):
            if (entry := keys.get(".".join(parts[:used]))) is not None:
                return _line(text, entry[0].start_mark), entry[1], used
    return None


def _deepest(text: str, node: Any, parts: list[str], line: int) -> int:
    """The line of the deepest entry of `parts` below `node` (whose own line is `line`)."""
    while parts and (found := _step(text, node, parts)) is not None:
        line, node, used = found
        parts = parts[used:]
    return line
