"""A cheaper constructor for a frozen, slotted dataclass, for the values made by the
thousand on every redraw (a seat's view, its screen, what the screen says).

A frozen dataclass's ``__init__`` stores each field through ``object.__setattr__`` (its
own ``__setattr__`` refuses): a call a field, ten times the cost of a plain attribute
store (22 fields: 3 µs against 0.3 µs here). ``quick_constructor(cls)`` returns a
function that takes the same arguments and returns an instance of ``cls`` itself, equal
to ``cls(...)`` and as frozen: it is built by an unfrozen twin (same fields, same slots,
same defaults; plain stores) whose instance then takes ``cls`` as its class. Python
allows that switch exactly when the two lay their instances out alike (same slots, no
``__dict__``), which a slotted dataclass and its twin always do; where it cannot be
made (the engine compiled with mypyc: its classes are native), the constructor is
``cls`` itself. The twin's ``__init__`` is written out with the switch as its last line
(the dataclass's would call a ``__post_init__`` for it: a call an instance, eighteen
instances a redraw of six seats).

Only for dataclasses the twin can stand for: frozen and slotted, every field taken by
``__init__``, no ``__post_init__`` (what it would check is not checked by the twin).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["quick_constructor"]

P = ParamSpec("P")
T = TypeVar("T")


def quick_constructor(cls: Callable[P, T]) -> Callable[P, T]:
    """A constructor of ``cls`` (a frozen, slotted dataclass) that is cheaper than
    ``cls`` itself, with the same parameters: see the module docstring."""
    target: Any = cls
    if not (isinstance(target, type) and dataclasses.is_dataclass(target)):
        raise TypeError(f"{cls!r} is not a dataclass")
    params: Any = getattr(target, "__dataclass_params__", None)
    if params is None or not params.frozen:
        raise TypeError(f"{target.__name__} is not a frozen dataclass")
    if hasattr(target, "__post_init__"):
        raise TypeError(f"{target.__name__} has a __post_init__ its twin would skip")
    slots = target.__dict__.get("__slots__")
    if slots is None:  # a native class (mypyc) or one without slots: its own constructor
        return cls
    specs: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(target):
        if not f.init:
            raise TypeError(f"{target.__name__}.{f.name} is not taken by __init__")
        default = dataclasses.field(default=f.default, default_factory=f.default_factory)
        specs.append((f.name, f.type, default))

    def __post_init__(self: Any) -> None:  # the twin's last step: its instance is a cls
        self.__class__ = target

    twin: Any = dataclasses.make_dataclass(
        f"_Quick{target.__name__}",
        specs,
        namespace={"__post_init__": __post_init__},
        slots=True,
        eq=False,
        repr=False,
        match_args=False,
    )
    if tuple(twin.__slots__) != tuple(slots):
        return cls  # laid out otherwise: the class's own constructor
    try:  # tried once: Python refuses the switch between layouts that differ
        probe = object.__new__(twin)
        probe.__class__ = target
    except TypeError:
        return cls
    init = _switching_init(target)
    if init is not None:
        twin.__init__ = init
    made: Callable[P, T] = twin
    return made


def _switching_init(target: Any) -> Any:
    """The twin's ``__init__`` written out, the switch to ``target`` its last line: the
    dataclass's calls ``__post_init__`` for it, a call an instance (none for a field
    taken by keyword only, or named ``self``: the dataclass's then)."""
    namespace: dict[str, Any] = {"_target": target, "_MISSING": dataclasses.MISSING}
    params: list[str] = []
    body: list[str] = []
    for f in dataclasses.fields(target):
        name = f.name
        if f.kw_only or name == "self" or name.startswith("_"):
            return None
        store = name
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{name}"] = f.default
            params.append(f"{name}=_default_{name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
            params.append(f"{name}=_MISSING")
            store = f"_factory_{name}() if {name} is _MISSING else {name}"
        else:
            params.append(name)
        body.append(f"    self.{name} = {store}\n")
    source = f"def __init__(self, {', '.join(params)}):\n{''.join(body)}"
    source += "    self.__class__ = _target\n"
    exec(source, namespace)  # made of the dataclass's own field names only
    return namespace["__init__"]
