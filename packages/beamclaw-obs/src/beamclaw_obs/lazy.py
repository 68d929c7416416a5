"""Lazy package exports (PEP 562): a package's public names load on first use.

A package ``__init__`` names its exports twice: as real imports under ``TYPE_CHECKING``
(what pyright checks) and as a ``{module: names}`` map handed to :func:`lazy_exports`
(what runs). Importing the package then costs nothing; ``from pkg import Name`` imports
only the submodule that defines ``Name``. Invariants: a name resolves to the very object
its submodule defines, is imported once and then cached in the package namespace, and an
unknown name raises :class:`AttributeError` as for any module. A name that is also its
submodule's name (``beamclaw_obs.scrub``) binds at once: importing the submodule later would
otherwise shadow the name with the module object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping
from importlib import import_module

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: MutableMapping[str, object],
    exports: Mapping[str, Iterable[str]],
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` serving ``exports`` (``{module: names}``)
    into ``namespace`` (the package's ``globals()``)."""
    package = str(namespace["__name__"])
    where = {name: module for module, names in exports.items() for name in names}
    for name, module in where.items():
        if module == f"{package}.{name}":
            namespace[name] = getattr(import_module(module), name)

    def __getattr__(name: str) -> object:  # noqa: N807 -- the PEP 562 hook's name
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *where})

    return __getattr__, __dir__
