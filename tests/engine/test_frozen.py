"""``quick_constructor``: the same values as the class's own constructor, of the class
itself and as frozen, for the frozen slotted dataclasses it takes; a clear refusal for
the others; on the compiled build (native classes) the class's own constructor."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

import pytest

from controller.engine import SeatView
from controller.engine.frozen import quick_constructor


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    count: int = 0
    tags: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)


quick_sample = quick_constructor(Sample)


def test_it_makes_what_the_class_makes() -> None:
    made = quick_sample("a", 2, ("x",), ["n"])
    assert type(made) is Sample
    assert made == Sample("a", 2, ("x",), ["n"])
    assert repr(made) == "Sample(name='a', count=2, tags=('x',), notes=['n'])"
    assert dataclasses.astuple(made) == ("a", 2, ("x",), ["n"])


def test_keywords_and_defaults_as_the_class_takes_them() -> None:
    assert quick_sample("b") == Sample("b")
    assert quick_sample(name="c", tags=("t",)) == Sample("c", tags=("t",))
    one, two = quick_sample("d"), quick_sample("d")
    assert one.notes == [] and one.notes is not two.notes  # a fresh default each
    with pytest.raises(TypeError):
        quick_sample()  # type: ignore[call-arg]


def test_what_it_makes_is_frozen_and_hashes_as_the_class_s() -> None:
    made = quick_constructor(Pair)(1, (2, 3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.a = 2  # type: ignore[misc]
    assert hash(made) == hash(Pair(1, (2, 3)))
    assert {made: "x"}[Pair(1, (2, 3))] == "x"
    assert not hasattr(made, "__dict__")


@dataclass(frozen=True, slots=True)
class Pair:
    a: int
    b: tuple[int, ...]


@dataclass(slots=True)
class Unfrozen:
    a: int


@dataclass(frozen=True, slots=True)
class Checked:
    a: int

    def __post_init__(self) -> None:
        if self.a < 0:
            raise ValueError(self.a)


@dataclass(frozen=True, slots=True)
class Derived:
    a: int
    b: int = field(init=False, default=0)


class Plain:
    pass


@pytest.mark.parametrize("cls", [Unfrozen, Checked, Derived, Plain])
def test_it_refuses_what_a_twin_cannot_stand_for(cls: type) -> None:
    with pytest.raises(TypeError):
        quick_constructor(cls)


@dataclass(frozen=True)
class Unslotted:
    a: int


def test_a_class_without_slots_keeps_its_own_constructor() -> None:
    assert quick_constructor(Unslotted) is Unslotted


def test_the_views_constructor_on_each_build() -> None:
    """The pure build's views are made by the twin; the compiled build's SeatView is a
    native class, made by its own constructor."""
    from controller.engine import view

    compiled = os.environ.get("TRUCO_TABLE_BUILD", "pure") == "compiled"
    assert (view._new_view is SeatView) == compiled


@dataclass(frozen=True, slots=True)
class KeywordOnly:
    a: int
    b: int = field(default=0, kw_only=True)


def test_a_field_taken_by_keyword_only_is_made_as_the_class_makes_it() -> None:
    """The twin's own ``__init__`` (the class switched on its last line) is written out
    for positional fields; one taken by keyword only keeps the dataclass's."""
    made = quick_constructor(KeywordOnly)(1, b=2)
    assert type(made) is KeywordOnly
    assert made == KeywordOnly(1, b=2)
    assert quick_constructor(KeywordOnly)(3) == KeywordOnly(3)
