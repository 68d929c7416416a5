"""A configuration section, and reading one section without the whole configuration.

:func:`read_section` is for commands that need a key or two (``beamclaw status``: the
``[gateway.http]`` address; ``beamclaw agent list``: ``[core] default_agent``). It takes the
table at a dotted path of the file the lookup order selects, lays the environment's
``BEAMCLAW_<A>__<B>__<KEY>`` overrides over it the way the full loader does (nested names,
case-insensitive, a JSON value for a table, the most nested name winning), and validates it
with that section's model alone. It loads neither pydantic-settings nor any other section's
model, so it costs a fraction of :func:`~beamclaw_obs.load_settings`. Reading the table
itself needs no model at all (:mod:`beamclaw_obs.section_table`).

Invariant: for the sections it reads, the values equal those of
:func:`~beamclaw_obs.load_settings` on the same file and environment (a test compares
them). It does not report unknown keys or problems in other sections: the full loader
(``beamclaw serve``, ``beamclaw config check``) does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import UnionType
from typing import Any, ClassVar, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from beamclaw_obs.config_file import describe_error
from beamclaw_obs.errors import ConfigError
from beamclaw_obs.section_table import TableShape, read_table


class Section(BaseModel):
    """Base for a configuration section: unknown keys are tolerated (and warned about).

    A key's meaning is the docstring under its attribute; ``scripts/gen_config_docs.py``
    reads those from the source for ``docs/configuration.md``. They are not parsed at run
    time: pydantic's ``use_attribute_docstrings`` re-reads and parses every section's source
    when its class is built, about a quarter of a CLI command's time.
    """

    model_config = ConfigDict(extra="ignore", validate_default=True)

    replaced_keys: ClassVar[Mapping[str, str]] = {}
    """Keys this section no longer has -> what replaced them (added to the warning)."""


M = TypeVar("M", bound=BaseModel)


def _is_complex(annotation: Any) -> bool:
    """Whether an environment value for a field of this type is JSON (as pydantic-settings
    decodes it): a model, a mapping, a sequence, or an optional of one."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return any(_is_complex(a) for a in get_args(annotation) if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return origin in (dict, list, tuple, set, frozenset) or annotation in (dict, list)


class ModelShape:
    """A section model's keys as :func:`~beamclaw_obs.section_table.read_table` needs them."""

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model

    def child(self, key: str) -> TableShape | None:
        field = self.model.model_fields.get(key)
        if field is None:
            return None
        annotation = field.annotation
        candidates = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else ()
        for candidate in (annotation, *candidates):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                return ModelShape(candidate)
        return None

    def is_json(self, key: str) -> bool:
        field = self.model.model_fields.get(key)
        return field is not None and _is_complex(field.annotation)


def read_section(
    keys: tuple[str, ...],
    model: type[M],
    path: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> M:
    """The section at the dotted path ``keys`` (``("gateway", "http")``), file then env.

    ``path`` is an explicit file; otherwise the lookup order decides (``$BEAMCLAW_CONFIG``,
    ``$BEAMCLAW_HOME/beamclaw.toml``, the packaged defaults).

    Raises:
        ConfigError: the file is missing (explicit), malformed, or the section invalid.
    """
    table, source = read_table(keys, ModelShape(model), path, environ=environ)
    try:
        return model.model_validate(table)
    except ValidationError as exc:
        prefix = ".".join(keys)
        raise ConfigError(source, [describe_error(e, prefix) for e in exc.errors()]) from exc
