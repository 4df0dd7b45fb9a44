"""The pure enrollment session: order, prompts, refusals, undo, skip, re-tagging."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.engine.cards import CARDS, Card
from controller.hal.deck import Deck, DeckError, DeckRegistry, IncompleteDeckError
from controller.hal.enroll import ENROLL_ORDER, EnrollSession, StepKind

from .test_deck import make_deck, uid

C = Card.from_str
NEW = 7  # uid(i, NEW): tags of the deck being enrolled in these tests


def tag(i: int) -> bytes:
    return uid(i, NEW)


def enroll_all(session: EnrollSession, deck: int = NEW) -> None:
    while not session.finished:
        card = session.expected
        assert card is not None
        assert session.tap(uid(card.index, deck)).accepted


def test_order_is_deck_order_suit_by_suit() -> None:
    assert [str(c) for c in ENROLL_ORDER[:11]] == [
        "1E", "2E", "3E", "4E", "5E", "6E", "7E", "10E", "11E", "12E", "1B",
    ]  # fmt: skip
    assert [c.suit.value for c in ENROLL_ORDER[::10]] == ["E", "B", "O", "C"]
    assert len(set(ENROLL_ORDER)) == 40


def test_full_enrollment() -> None:
    session = EnrollSession("bar deck 1")
    assert session.prompt == "Tocá el 1 de espadas (1E)"
    assert session.progress == (0, 40)
    for n, card in enumerate(ENROLL_ORDER):
        assert session.expected == card
        assert f"({card})" in session.prompt
        step = session.tap(tag(n))
        assert step.kind is StepKind.ACCEPTED and step.accepted and not step.refused
        assert step.card == card and step.uid == tag(n)
        assert step.expected == (ENROLL_ORDER[n + 1] if n < 39 else None)
        assert session.progress == (n + 1, 40)
    assert session.finished and session.expected is None and session.missing == ()
    assert session.prompt == "Listo: 40 cartas registradas"
    deck = session.deck()
    assert deck == Deck("bar deck 1", {tag(i): c for i, c in enumerate(ENROLL_ORDER)})
    assert list(session.enrolled) == list(ENROLL_ORDER)


def test_prompts_of_figures() -> None:
    session = EnrollSession("d")
    for i in range(7):
        session.tap(tag(i))
    assert session.prompt == "Tocá el 10 de espadas (10E)"
    for i in range(7, 29):
        session.tap(tag(i))
    assert session.prompt == "Tocá el 12 de oros (12O)"


def test_tap_after_finishing_is_ignored() -> None:
    session = EnrollSession("d")
    enroll_all(session)
    step = session.tap(uid(0, 3))
    assert step.kind is StepKind.COMPLETE and step.expected is None
    assert session.skip().kind is StepKind.COMPLETE
    assert session.deck().lookup(uid(0, 3)) is None


def test_duplicate_tap_is_ignored() -> None:
    session = EnrollSession("d")
    session.tap(tag(0))
    step = session.tap(tag(0))  # the 1E still lying on the reader
    assert step.kind is StepKind.REPEAT and step.card == C("1E")
    assert not step.accepted and not step.refused
    assert "ignorada" in step.message and "ignored" in step.message_en
    assert session.expected == C("2E") and session.progress == (1, 40)
    assert session.tap(tag(1)).card == C("2E")


def test_duplicate_of_a_refused_tap_is_ignored_too() -> None:
    other = DeckRegistry((make_deck("old", 0),))
    session = EnrollSession("d", other)
    assert session.tap(uid(5, 0)).kind is StepKind.OTHER_DECK
    step = session.tap(uid(5, 0))
    assert step.kind is StepKind.REPEAT and step.card is None
    assert session.expected == C("1E")


def test_tag_already_enrolled_in_this_deck() -> None:
    session = EnrollSession("d")
    for i in range(3):
        session.tap(tag(i))
    step = session.tap(tag(1))
    assert step.kind is StepKind.ALREADY_ENROLLED and step.refused
    assert step.card == C("2E") and step.expected == C("4E")
    assert "2E" in step.message
    assert session.expected == C("4E") and session.progress == (3, 40)
    # Tapped again right away: just a repeat.
    assert session.tap(tag(1)).kind is StepKind.REPEAT
    # After another tag, refused again.
    session.tap(tag(3))
    assert session.tap(tag(1)).kind is StepKind.ALREADY_ENROLLED


def test_tag_of_another_deck() -> None:
    registry = DeckRegistry((make_deck("bar deck 1", 0), make_deck("bar deck 2", 1)))
    session = EnrollSession("bar deck 3", registry)
    step = session.tap(uid(C("7O").index, 1))
    assert step.kind is StepKind.OTHER_DECK and step.refused
    assert step.deck == "bar deck 2" and step.card == C("7O")
    assert step.message == ("Esa carta es el 7O del mazo 'bar deck 2'")
    assert session.expected == C("1E")
    enroll_all(session)
    new = registry.with_deck(session.deck())
    assert new.names == ("bar deck 1", "bar deck 2", "bar deck 3")
    assert new.card_of(tag(0)) == C("1E")


def test_enrolling_a_deck_again_may_reuse_its_own_tags() -> None:
    registry = DeckRegistry((make_deck("bar deck 1", 0), make_deck("bar deck 2", 1)))
    session = EnrollSession("Bar Deck 1", registry)  # --replace, names ignore case
    # Its old tags are free now, even for another card.
    assert session.tap(uid(39, 0)).card == C("1E")
    # Tags of the other deck are still refused.
    assert session.tap(uid(1, 1)).kind is StepKind.OTHER_DECK


@pytest.mark.parametrize(
    "bad",
    [b"\x04\x01", b"\x04\x01\x02\x03\x04", bytes(8), b"\x08\x11\x22\x33"],
)
def test_unusable_tags(bad: bytes) -> None:
    session = EnrollSession("d")
    step = session.tap(bad)
    assert step.kind is StepKind.BAD_TAG and step.refused
    assert session.expected == C("1E")
    if bad[0] == 0x08:
        assert "cambia de número" in step.message and "random UID" in step.message_en
    assert session.tap(bad).kind is StepKind.BAD_TAG


def test_undo() -> None:
    session = EnrollSession("d")
    assert session.undo().kind is StepKind.NOTHING_TO_UNDO
    session.tap(tag(0))
    session.tap(tag(99))  # wrong card put down as 2E
    step = session.undo()
    assert step.kind is StepKind.UNDONE and step.card == C("2E") and step.uid == tag(99)
    assert step.expected == C("2E") and session.progress == (1, 40)
    assert session.tap(tag(1)).card == C("2E")
    # The undone tag is free again.
    assert session.tap(tag(99)).card == C("3E")


def test_undo_then_the_same_tag_again_is_not_a_repeat() -> None:
    session = EnrollSession("d")
    session.tap(tag(0))
    session.undo()
    step = session.tap(tag(0))
    assert step.kind is StepKind.ACCEPTED and step.card == C("1E")


def test_undo_everything() -> None:
    session = EnrollSession("d")
    enroll_all(session)
    for card in reversed(ENROLL_ORDER):
        assert session.undo().card == card
    assert session.undo().kind is StepKind.NOTHING_TO_UNDO
    assert session.missing == ENROLL_ORDER and session.enrolled == {}


def test_skip_asks_for_the_card_at_the_end() -> None:
    session = EnrollSession("d")
    step = session.skip()
    assert step.kind is StepKind.SKIPPED and step.card == C("1E") and step.expected == C("2E")
    for i in range(1, 40):
        assert session.tap(tag(i)).card == ENROLL_ORDER[i]
    assert session.missing == (C("1E"),) and not session.finished
    assert session.skip().card == C("1E")  # the only one left: asked for again
    assert session.tap(tag(0)).card == C("1E")
    assert session.deck().lookup(tag(0)) == C("1E")


def test_undo_after_skip_asks_for_the_undone_card_first() -> None:
    session = EnrollSession("d")
    session.tap(tag(0))
    session.skip()  # 2E
    session.undo()  # 1E
    assert session.missing[:3] == (C("1E"), C("3E"), C("4E"))
    assert session.missing[-1] == C("2E")


def test_missing_cards_are_reported_and_give_no_deck() -> None:
    session = EnrollSession("bar deck 1")
    for i in range(38):
        session.tap(tag(i))
    assert session.missing == (C("11C"), C("12C"))
    with pytest.raises(IncompleteDeckError) as info:
        session.deck()
    assert info.value.missing == (C("11C"), C("12C"))
    assert str(info.value) == "mazo 'bar deck 1': faltan 2 cartas: 11C, 12C"


def test_retag_one_card() -> None:
    old = make_deck("bar deck 1", 0)
    registry = DeckRegistry((old, make_deck("bar deck 2", 1)))
    session = EnrollSession("bar deck 1", registry, cards=[C("7E")])
    assert session.targets == (C("7E"),) and session.progress == (0, 1)
    assert session.prompt == "Tocá el 7 de espadas (7E)"
    step = session.tap(uid(0, 0))  # the 1E, still enrolled
    assert step.kind is StepKind.ALREADY_ENROLLED and step.card == C("1E")
    assert session.tap(uid(0, 1)).kind is StepKind.OTHER_DECK
    assert session.tap(tag(0)).card == C("7E")
    assert session.finished
    assert session.prompt == "Listo: 1 carta registrada"
    new = session.deck()
    assert new == old.retagged({C("7E"): tag(0)})
    assert registry.with_deck(new).card_of(tag(0)) == C("7E")


def test_retag_several_cards_in_deck_order() -> None:
    registry = DeckRegistry((make_deck("d", 0),))
    session = EnrollSession("D", registry, cards=[C("3C"), C("1E"), C("3C")])
    assert session.targets == (C("1E"), C("3C"))
    # The old tag of a card being re-tagged may be used again.
    assert session.tap(uid(0, 0)).card == C("1E")
    assert session.tap(tag(1)).card == C("3C")
    assert session.deck().name == "d"  # the deck keeps its name


def test_retag_needs_an_existing_deck_and_cards() -> None:
    with pytest.raises(DeckError, match="no such deck"):
        EnrollSession("nope", DeckRegistry((make_deck("d"),)), cards=[C("7E")])
    with pytest.raises(DeckError, match="no cards"):
        EnrollSession("d", DeckRegistry((make_deck("d"),)), cards=[])


def test_bad_name() -> None:
    with pytest.raises(DeckError):
        EnrollSession(" padded ")


def test_every_step_speaks_spanish_and_the_log_english() -> None:
    registry = DeckRegistry((make_deck("x", 0),))
    session = EnrollSession("d", registry)
    steps = [
        session.undo(),
        session.tap(tag(0)),
        session.tap(tag(0)),
        session.tap(uid(1, 0)),
        session.tap(tag(1)),
        session.tap(tag(0)),
        session.tap(b"\x01\x02"),
        session.skip(),
        session.undo(),
    ]
    enroll_all(session)
    steps.append(session.tap(uid(2, 5)))
    kinds = {s.kind for s in steps}
    assert kinds == set(StepKind)
    for step in steps:
        spanish, english = step.message, step.message_en
        assert spanish and english and spanish != english and " / " not in spanish


# -- random sessions ---------------------------------------------------------------------------

OTHER = DeckRegistry((make_deck("other", 0),))
POOL = [tag(i) for i in range(45)] + [uid(i, 0) for i in range(0, 40, 7)] + [b"\x08abc", b"xx"]
ops = st.lists(st.one_of(st.sampled_from(POOL), st.sampled_from(["undo", "skip"])), max_size=150)


@settings(max_examples=200, deadline=None)
@given(ops, st.booleans())
def test_random_taps_never_corrupt_the_session(sequence: list[bytes | str], retag: bool) -> None:
    if retag:
        registry = OTHER.with_deck(make_deck("mine", 1))
        session = EnrollSession("mine", registry, cards=[C("7E"), C("1B"), C("12C")])
    else:
        registry = OTHER
        session = EnrollSession("mine", registry)
    targets = set(session.targets)
    for op in sequence:
        expected = session.expected
        before = dict(session.enrolled)
        if op == "undo":
            step = session.undo()
        elif op == "skip":
            step = session.skip()
        else:
            assert isinstance(op, bytes)
            step = session.tap(op)
        enrolled = dict(session.enrolled)
        if step.kind is StepKind.ACCEPTED:
            assert expected is not None  # for mypy; the next assert implies it
            assert step.card == expected and enrolled == {**before, expected: op}
        elif step.kind is StepKind.UNDONE:
            assert len(enrolled) == len(before) - 1 and session.expected == step.card
        else:
            assert enrolled == before
        # Invariants.
        assert set(enrolled) | set(session.missing) == targets
        assert not set(enrolled) & set(session.missing)
        assert len(session.missing) == len(set(session.missing))
        assert len(set(enrolled.values())) == len(enrolled)
        assert all(OTHER.lookup(u) is None for u in enrolled.values())
        assert session.finished == (not session.missing)
        assert step.expected == session.expected
    if session.finished:
        deck = session.deck()
        combined = registry.with_deck(deck)  # valid: no tag in two decks
        assert len(combined.get("mine") or ()) == 40
    else:
        with pytest.raises(IncompleteDeckError):
            session.deck()


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(40)))
def test_any_tags_in_any_order_of_skips_give_a_complete_deck(order: list[int]) -> None:
    session = EnrollSession("d")
    while not session.finished:
        expected = session.expected
        assert expected is not None
        if order and expected.index != order[0]:
            session.skip()
            continue
        session.tap(tag(expected.index))
        order = order[1:]
    deck = session.deck()
    assert all(deck.lookup(tag(c.index)) == c for c in CARDS)
