"""Every import of eks_devices that the README and docs/ show resolves: a reader who copies a
snippet gets a module and names that exist."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

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
    result = subprocess.run([sys.executable, "-c", "\n".join(imports)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


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
