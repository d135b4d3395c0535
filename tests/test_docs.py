"""The API reference (``mkdocs build``, from the docstrings) documents every public class,
function, method, property and field of the modules it shows, and speaks for itself: no
reference to documents outside the package."""

from __future__ import annotations

import pytest

griffe = pytest.importorskip("griffe", reason="griffe comes with mkdocstrings-python, in the test extra")

# The modules the reference pages show (``::: name`` in docs/api): the package, formats, stores,
# the viewer and every adapter module. Their public names are their ``__all__``, so what is added to them
# later is checked too.
PAGES = ("ctxfold", "ctxfold.formats", "ctxfold.stores", "ctxfold.viewer")


def shown(package) -> list[str]:
    adapters = sorted(f"ctxfold.adapters.{name}" for name in package["adapters"].modules if not name.startswith("_"))
    assert "ctxfold.adapters.openai_agents" in adapters
    return [*PAGES, *adapters]


def public(obj, path: str):
    """(path, object) of ``obj``'s public members, recursively into classes."""
    names = [str(n) for n in obj.exports] if obj.is_module and obj.exports is not None else list(obj.members)
    for name in names:
        if name.startswith("_"):
            continue
        member = obj.members[name]
        target = member.final_target if member.is_alias else member
        if target.is_module:
            continue
        yield f"{path}.{name}", target
        if target.is_class:
            yield from public(target, f"{path}.{name}")


@pytest.fixture(scope="module")
def package():
    return griffe.load("ctxfold", resolve_aliases=True, resolve_external=False)


def test_every_public_name_has_a_docstring(package):
    missing, seen = [], 0
    for module in shown(package):
        obj = package if module == "ctxfold" else package[module.removeprefix("ctxfold.")]
        assert obj.docstring and obj.docstring.value.strip(), module
        for path, target in public(obj, module):
            seen += 1
            if not (target.docstring and target.docstring.value.strip()):
                missing.append(path)
    assert seen > 150 and missing == [], "\n".join(missing)


def test_docstrings_stand_alone(package):
    offending = []
    for module in shown(package):
        obj = package if module == "ctxfold" else package[module.removeprefix("ctxfold.")]
        for path, target in [(module, obj), *public(obj, module)]:
            text = target.docstring.value if target.docstring else ""
            if "SPEC" in text or "§" in text:
                offending.append(path)
    assert offending == []
