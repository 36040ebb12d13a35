"""Every import of eks_devices that the README and docs/ show resolves: a reader who copies a
snippet gets a module and names that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support.cli import fresh

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def snippet_imports() -> list[str]:
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in BLOCK.findall(doc.read_text()):
            # a snippet may be partial (`...`, bare expressions); its import statements must parse alone
            for node in ast.parse(_imports_only(block)).body:
                if isinstance(node, ast.ImportFrom | ast.Import):
                    found.append(ast.unparse(node))
    return found


def _imports_only(block: str) -> str:
    """The block's top-level import statements (parenthesised ones included), nothing else."""
    out, keep = [], False
    for line in block.splitlines():
        if line.startswith(("from ", "import ")):
            keep = "(" in line and ")" not in line
            out.append(line)
        elif keep:
            out.append(line)
            keep = ")" not in line
    return "\n".join(out)


def test_documented_imports_resolve() -> None:
    imports = [i for i in snippet_imports() if "eks_devices" in i]
    assert len(imports) >= 6, imports  # README, node pools, device software, preflight, claims, CEL
    fresh("\n".join(imports))


def test_no_document_imports_the_old_package_name() -> None:
    assert not [i for i in snippet_imports() if re.match(r"(from|import) components\b", i)]


def test_sources_are_cited_upstream_not_in_private_notes() -> None:
    """Code, tests and docs cite the upstream source (repository, path, tag, or documentation page)."""
    files = [p for d in ("components", "tests", "docs", "examples", "bench") for p in (ROOT / d).rglob("*")
             if p.suffix in (".py", ".md", ".json", ".yaml") and "__pycache__" not in p.parts]
    assert len(files) > 50
    marker = "FACTS" + " §"  # spelled in two parts so this file does not match itself
    assert not [str(p.relative_to(ROOT)) for p in [*files, ROOT / "README.md"]
                if marker in p.read_text(encoding="utf-8") or "FACTS" + ".md" in p.read_text(encoding="utf-8")]


# --- the components' arguments as the docs show them ----------------------------------------------

ARGS_CALL = re.compile(r"\b(NodePoolsArgs|DeviceSoftwareArgs|ClaimTemplatesArgs|ClusterDevicesArgs)\(")


def _documented_args_calls() -> list[tuple[str, str, ast.Call]]:
    """Every `<Component>Args(...)` the README, docs/ and the examples show, parsed: (where, class, call)."""
    sources = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
               *sorted((ROOT / "examples").glob("*/__main__.py"))]
    calls = []
    for source in sources:
        text = source.read_text()
        for match in ARGS_CALL.finditer(text):
            depth, end = 0, match.end() - 1
            for end in range(match.end() - 1, len(text)):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
            call = ast.parse(text[match.start():end + 1], mode="eval").body
            assert isinstance(call, ast.Call)
            calls.append((str(source.relative_to(ROOT)), match.group(1), call))
    return calls


def test_documented_component_arguments_exist_and_cover_every_field() -> None:
    """A reader who copies a documented `…Args(...)` gets fields that exist, in the documented order
    for positional ones; and every field the Args has is shown somewhere (a new field is documented)."""
    import dataclasses

    import eks_devices

    calls = _documented_args_calls()
    shown: dict[str, set[str]] = {}
    for where, name, call in calls:
        fields = [f.name for f in dataclasses.fields(getattr(eks_devices, name))]
        positional = [a.id for a in call.args if isinstance(a, ast.Name)]
        assert positional == fields[:len(positional)], (where, name, positional)
        keywords = [k.arg for k in call.keywords]
        assert not [k for k in keywords if k not in fields], (where, name, keywords)
        shown.setdefault(name, set()).update(positional, keywords)
    assert set(shown) == {"NodePoolsArgs", "DeviceSoftwareArgs", "ClaimTemplatesArgs", "ClusterDevicesArgs"}
    for name, used in shown.items():
        missing = [f.name for f in dataclasses.fields(getattr(eks_devices, name)) if f.name not in used]
        assert not missing, f"{name} fields no document shows: {missing}"


def test_claims_snippet_prints_what_its_comments_say() -> None:
    """docs/claims.md's Python block runs, and each `expr  # literal` line evaluates to that literal."""
    block = next(b for b in BLOCK.findall((ROOT / "docs" / "claims.md").read_text()) if "gpu_efa_aligned" in b)
    scope: dict[str, object] = {}
    checked = 0
    for line in block.splitlines():
        code, _, comment = line.partition("#")
        try:
            expected = ast.literal_eval(comment.strip())
        except (ValueError, SyntaxError):
            exec(code, scope)  # the documented snippet itself
            continue
        assert eval(code, scope) == expected, line
        checked += 1
    assert checked >= 2
