"""Property-based, over the stack file as text: the shipped stack files edited as a person edits them by hand
(a line dropped or repeated, a value or a key mistyped, an indentation off by one, a stray byte, a file cut
short) go through `check --format json` as a user runs it. It ends without a traceback, in 0, 1 or 2, with
well-formed JSON whose exit codes agree and whose every problem has a path (a line of the file, the file, a
key the file holds or a section it must have), and each GitHub annotation points at a line of the file.
`test_generated_stack_files` mutates the parsed mapping; this reaches the YAML reader too (repeated keys,
tabs, aliases, tags). Fixed seed and a small budget (about 3 s)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from eks_devices.cli import check as checking
from eks_devices.cli.app import app
from eks_devices.core.config.keys import camel_case
from eks_devices.core.config.stack import STACK_KEYS
from support import verbs
from support.stacks import STACKS

TEXTS = [p.read_text(encoding="utf-8") for p in sorted(STACKS.glob("Pulumi.*.yaml"))]
# what a hand may put after a key: right and wrong types, near misses of the vocabulary, YAML's own syntax
VALUES = ['"1.36"', "1.36", "1.36.0", "-1", "0", "99999999999999999999", "~", "[]", "{}", "yes", "1e400", ".nan",
          "2026-01-01", "!!binary AA==", "!!int x", "&a x", "*a", "*nope", "'unterminated", '"\\q"', "\t1", "é",
          "p5.48xlage", "m7i.large", "automode", "dar", "DRA", "device_plugin", "capacity-blocks", "1.15",
          "[p5.48xlarge, p5.48xlarge]", "{a: 1}", "a: b: c", "- x", "? [a]", "|", "1.14.0"]
KEYS = ["config", "eks-devices:cluster", "eks-devices:nodePools", "nodePools", "instanceTypes", "devices", "nvidia",
        "efa", "mode", "version", "karpenter", "gpuSharing", "capacity", "replicas", "provisioning", "claims", "pools"]
# a problem's path begins with a key the file holds, or with a section the stack must have (`eks-devices:cluster`)
SECTIONS = {*STACK_KEYS, *(camel_case(name) for name in STACK_KEYS.values())}
KEY_LINE = re.compile(r"^(\s*-?\s*)([^:#\s][^:#]*):(.*)$")


@st.composite
def edited(draw: st.DrawFn) -> str:
    """A shipped stack file with one to four hand edits."""
    lines = draw(st.sampled_from(TEXTS)).split("\n")
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        line, action = lines[i], draw(st.sampled_from(["drop", "repeat", "value", "value", "key", "indent", "byte",
                                                       "cut", "insert"]))
        found = KEY_LINE.match(line)
        if action == "drop":
            del lines[i]
        elif action == "repeat":  # a repeated key, or a list item twice
            lines.insert(i, line)
        elif action == "value" and found:
            lines[i] = f"{found[1]}{found[2]}: {draw(st.sampled_from(VALUES))}"
        elif action == "key" and found:
            key = found[2]
            how = draw(st.sampled_from(["drop", "swap", "upper", "snake", "plural", "other"]))
            j = draw(st.integers(0, max(len(key) - 2, 0)))
            key = {"drop": key[:j] + key[j + 1:], "swap": key[:j] + key[j + 1:j + 2] + key[j] + key[j + 2:],
                   "upper": key.upper(), "snake": re.sub(r"([A-Z])", lambda c: "_" + c[1].lower(), key),
                   "plural": key + "s", "other": draw(st.sampled_from(KEYS))}[how] or key
            lines[i] = f"{found[1]}{key}:{found[3]}"
        elif action == "indent":
            step = draw(st.sampled_from([-2, -1, 1, 2, "tab"]))
            lines[i] = ("\t" + line if step == "tab" else " " * step + line if isinstance(step, int) and step > 0
                        else line[-step:] if line.startswith(" " * -int(step)) else line)
        elif action == "byte":
            lines[i] = line + draw(st.sampled_from(["\udcff", "\ufeff", "\r", "\x00", "\u2028", "\x85"]))
        elif action == "cut":
            lines = lines[:i]
        elif action == "insert":
            lines.insert(i, " " * draw(st.sampled_from([0, 2, 4, 6])) + draw(st.sampled_from(KEYS)) + ": "
                         + draw(st.sampled_from(VALUES)))
    return "\n".join(lines)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return verbs.project(tmp_path_factory.mktemp("project"))


def check_edited(folder: Path, text: str) -> int:
    """`check` on the edited file, and what must hold of its answer; returns its exit code."""
    path = folder / "stacks" / f"Pulumi.{verbs.STACK}.yaml"
    raw = text.encode("utf-8", "surrogateescape")  # a lone surrogate stands for a byte that is not UTF-8
    path.write_bytes(raw)
    result = CliRunner().invoke(app, ["check", verbs.STACK, "--format", "json", "--project-dir", str(folder)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1, 2), result.output
    data = json.loads(result.stdout)
    [stack] = data["stacks"]
    assert data["exitCode"] == stack["exitCode"] == result.exit_code
    assert (result.exit_code == 2) == bool(stack["problems"]), stack
    readable = raw.decode("utf-8", "replace")
    for problem in stack["problems"]:
        where = problem["path"]
        assert problem["given"] and problem["accepted"], problem
        assert (re.fullmatch(r"line \d+", where) or where in (str(path), "config")
                or where.split(".")[0] in readable or where.split(".")[0] in SECTIONS), problem
    annotated = checking.github_annotations(checking.check([verbs.STACK], folder / "stacks", folder), folder)
    count = readable.count("\n") + 1
    assert all(1 <= int(re.search(r",line=(\d+),", a)[1]) <= count for a in annotated), annotated  # type: ignore[index]
    return result.exit_code


@settings(max_examples=60, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=edited())
def test_hand_edited_stack_files_end_in_a_verdict_with_every_problem_placed(folder: Path, text: str) -> None:
    check_edited(folder, text)


def test_the_edits_reach_every_verdict(folder: Path) -> None:
    """Unedited files pass, a mistyped mode is refused, a pool asking for a family it lacks is an error: the
    property above meets each verdict, and the YAML reader's own refusals among them."""
    dev = TEXTS[0]
    assert check_edited(folder, dev) == 0
    assert check_edited(folder, dev.replace("mode: auto-mode", "mode: automode")) == 2
    assert check_edited(folder, dev.replace("      instanceTypes: [inf2.xlarge, inf2.8xlarge]",
                                            "      instanceTypes: [inf2.xlarge]\n      devices: {nvidia: dra}")) == 1
    assert check_edited(folder, dev.replace("    name: ml-dev\n", "    name: ml-dev\n    name: ml-dev2\n")) == 2
    assert check_edited(folder, dev.replace("    mode: auto-mode", "\tmode: auto-mode")) == 2
