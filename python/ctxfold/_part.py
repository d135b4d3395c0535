"""``Part.text`` is both a factory (``Part.text("hi")``) and, on a part, its text field.

Rust cannot express a name that is a static method on the class and a field on instances,
so this descriptor is installed on the class once at import."""

from __future__ import annotations

from typing import Any


class _FactoryOrField:
    def __init__(self, factory: Any, field: str) -> None:
        self._factory = factory
        self._field = field

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self._factory
        return obj.get(self._field)


def install_text_descriptor(part_cls: Any) -> None:
    if not isinstance(part_cls.__dict__.get("text"), _FactoryOrField):
        part_cls.text = _FactoryOrField(part_cls.text, "text")
