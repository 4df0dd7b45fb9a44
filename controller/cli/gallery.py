"""Every kind of seat screen, built from real game states.

Each ``Shot`` is one seat's screen at a state reached by playing real actions on a real
``Game`` behind a real ``Table`` (refusals are refused actions, menus are held buttons,
the deal is tapped cards), then ``screen_for`` - exactly what the table would display.
The golden images (``tests/render/golden/screens``) and the contact sheet
(``truco-table render --contact-sheet``) are made from these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..engine import Action, Card, Game, HouseRules, RefusalCode
from ..hal.events import (
    ButtonHeld,
    ButtonPressed,
    NodeDisconnected,
    TagArrived,
    TagConflict,
    TagLeft,
)
from ..hal.mock import MockDeck
from ..notices import TableAlert
from ..render.screen import MatchCard, SeatScreen
from ..table.screens import screen_for
from ..table.table import DealReading, Table

__all__ = ["Shot", "refusal_shots", "score_shots", "shots", "state_shots"]

DECK = MockDeck(0)

#: worked hand 1 (docs/RULES.md): seat 0 holds 33 of envido, seat 1 holds 25
HANDS_2 = {0: "7C 6C 3E", 1: "2O 1B 4B"}
#: flor against flor: seat 0 flor 33, seat 1 flor 28
FLOR_2 = {0: "3O 4O 6O", 1: "1C 2C 5C"}
HANDS_4 = {0: "7E 6E 3C", 1: "2O 12O 4B", 2: "1B 5C 10E", 3: "3E 7O 11B"}
HANDS_6 = {
    0: "7E 6E 3C",
    1: "2O 12O 4B",
    2: "1B 5C 10E",
    3: "3E 7O 11B",
    4: "1E 4C 6O",
    5: "2C 5O 12B",
}


@dataclass(frozen=True)
class Shot:
    """One seat's screen: ``name`` names its golden file, ``title`` labels it."""

    name: str
    title: str
    screen: SeatScreen


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _cards(text: str) -> list[Card]:
    return [Card.from_str(c) for c in text.split()]


#: the score the shots start from (unless they say), so that the sticks show
SCORE = (11, 7)


def table_at(
    actions: Iterable[str] = (),
    *,
    hands: dict[int, str] | None = None,
    players: int = 2,
    score: tuple[int, int] = SCORE,
    reading: DealReading = DealReading.SEATS,
    rules: Mapping[str, str] | None = None,
) -> Table:
    """A table whose hand was dealt ``hands`` (worked hand 1 by default) and that then
    tried ``actions`` (transcript notation; refused ones show their message).

    The clock moves on 10 s before each action, so only the last action's messages are
    still on the displays (they last a few seconds)."""
    options = {"players": str(players), **(rules or {})}
    game = Game(HouseRules.from_options(options), score=score)
    clock = _Clock()
    table = Table(game.rules, DECK.lookup, deal_reading=reading, game=game, clock=clock)
    deal = hands if hands is not None else (HANDS_2 if players == 2 else {})
    table.new_hand()
    for seat, text in sorted(deal.items()):
        for card in _cards(text):
            table.handle(seat, TagArrived(DECK.uid(card)))
            table.handle(seat, TagLeft(DECK.uid(card)))
    table.start_play()
    clock.now += 10.0
    for text in actions:
        clock.now += 10.0
        table.attempt(Action.from_str(text))
    clock.now += 0.5
    return table


def _match_table(card: MatchCard | None, players: int) -> Table:
    """A table assigned ``card``'s match (``None``: waiting for the desk), its first deal
    started, no card read yet."""
    game = Game(HouseRules.from_options({"players": str(players)}))
    table = Table(game.rules, DECK.lookup, game=game, clock=_Clock())
    table.match, table.waiting = card, card is None
    table.new_hand()
    return table


def _after_game(card: MatchCard | None) -> Table:
    """A won game whose result was held: ``card`` next (``None``: waiting for the desk)."""
    table = _winning_table(winner=0, past=True)
    table.match, table.waiting, table.show_next = card, card is None, True
    return table


def _shot(name: str, title: str, table: Table, seat: int) -> Shot:
    return Shot(name, title, screen_for(table, seat))


def _press(table: Table, seat: int, *buttons: str, hold: str | None = None) -> Table:
    if hold is not None:
        table.handle(seat, ButtonHeld(hold))
    for name in buttons:
        table.handle(seat, ButtonPressed(name))
    return table


def _winning_table(
    *, winner: int, target: int = 30, loser_score: int | None = None, past: bool = False
) -> Table:
    """One point short for ``winner``'s team, then the other team goes to the mazo
    (``past``: team 0 wins an envido instead, 2 points, one past the target)."""
    other = target - 3 if loser_score is None else loser_score
    score = (target - 1, other) if winner == 0 else (other, target - 1)
    loser = 1 - winner
    actions = [f"{loser} mazo"] if loser == 0 else ["0 play 3E", "1 mazo"]
    return table_at(
        ["0 envido", "1 quiero"] if past and winner == 0 else actions,
        score=score,
        rules={"target": str(target), "mazo_envido_point": "off"},
    )


def state_shots() -> list[Shot]:
    """The state of the hand, calls, answers, tellings, announcements, pads, players."""
    out: list[Shot] = []

    def add(name: str, title: str, table: Table, seat: int) -> None:
        out.append(_shot(name, title, table, seat))

    # before and between hands, and the deal being read
    fresh = Table(HouseRules(), DECK.lookup, clock=_Clock())
    add("new_game", "partido nuevo", fresh, 0)
    dealing = Table(HouseRules(), DECK.lookup, clock=_Clock(), score=SCORE)
    dealing.new_hand()
    for card in _cards("7C 6C"):
        dealing.handle(0, TagArrived(DECK.uid(card)))
    add("dealing_seats", "reparto: tocá", dealing, 0)
    by_dealer = Table(
        HouseRules(), DECK.lookup, deal_reading=DealReading.DEALER, clock=_Clock(), score=SCORE
    )
    by_dealer.new_hand()
    for card in _cards("7C 2O 6C"):
        by_dealer.handle(1, TagArrived(DECK.uid(card)))
    add("dealing_dealer", "reparto: lee el que da", by_dealer, 1)
    add("dealing_dealer_other", "reparto: espera", by_dealer, 0)

    # whose turn
    add("turn_mine", "tu turno (mano)", table_at(), 0)
    add("turn_other", "turno de ellos", table_at(), 1)
    bazas = table_at(["0 play 3E", "1 play 2O", "0 play 7C", "1 play 1B"])
    add("bazas_won_lost", "bazas: ganada, perdida", bazas, 1)
    parda = table_at(["0 play 3E", "1 play 3O"], hands={0: "3E 7C 6C", 1: "3O 1B 4B"})
    add("baza_parda", "baza parda", parda, 0)

    # truco ladder
    first_baza = ["0 play 3E", "1 play 2O"]
    add("truco_pending", "truco?", table_at([*first_baza, "1 truco"]), 0)
    add("truco_called", "truco: cantamos", table_at([*first_baza, "1 truco"]), 1)
    add(
        "envido_esta_primero",
        "truco, envido primero",
        table_at(["0 truco"]),
        1,
    )
    add(
        "retruco_pending",
        "retruco?",
        table_at([*first_baza, "1 truco", "0 retruco"]),
        1,
    )
    add(
        "vale_cuatro_pending",
        "vale cuatro?",
        table_at([*first_baza, "1 truco", "0 retruco", "1 vale-cuatro"]),
        0,
    )
    truco = table_at([*first_baza, "1 truco", "0 quiero"])
    add("truco_accepted_ours", "truco: quiero nuestro", truco, 0)
    add("truco_accepted_theirs", "truco: quiero de ellos", truco, 1)
    retruco = table_at([*first_baza, "1 truco", "0 retruco", "1 quiero"])
    add("retruco_accepted", "retruco querido", retruco, 1)
    vale = table_at([*first_baza, "1 truco", "0 retruco", "1 vale-cuatro", "0 quiero"])
    add("vale_cuatro_accepted", "vale cuatro querido", vale, 0)

    # envido chains
    add("envido_e", "envido?", table_at(["0 envido"]), 1)
    add("envido_e_called", "envido: cantamos", table_at(["0 envido"]), 0)
    add("envido_e_e", "envido envido", table_at(["0 envido", "1 envido"]), 0)
    add("envido_e_r", "envido real envido", table_at(["0 envido", "1 real-envido"]), 0)
    add(
        "envido_e_e_r_f",
        "envido e-e-r-f",
        table_at(["0 envido", "1 envido", "0 real-envido", "1 falta-envido"]),
        0,
    )
    add("falta_envido", "falta envido?", table_at(["0 falta-envido"]), 1)
    add(
        "envido_primero_sung",
        "envido sobre un truco",
        table_at(["0 truco", "1 envido"]),
        0,
    )
    won = table_at(["0 envido", "1 quiero"])
    add("envido_won", "envido ganado: 33", won, 0)
    add("envido_lost", "envido perdido: 33", won, 1)

    # flor
    add(
        "flor_pending",
        "flor?",
        table_at(["0 flor"], hands=FLOR_2, rules={"flor": "on"}),
        1,
    )
    add(
        "contraflor_pending",
        "contraflor?",
        table_at(["0 flor", "1 contraflor"], hands=FLOR_2, rules={"flor": "on"}),
        0,
    )
    add(
        "al_resto_pending",
        "contraflor al resto",
        table_at(["0 flor", "1 contraflor-al-resto"], hands=FLOR_2, rules={"flor": "on"}),
        0,
    )
    add(
        "flor_won",
        "flor ganada",
        table_at(["0 flor", "1 flor"], hands=FLOR_2, rules={"flor": "on"}),
        0,
    )

    # penalties, with their reason; a claim to prove
    add(
        "flor_tapada",
        "penalidad: flor tapada",
        table_at(["0 play 3O"], hands=FLOR_2, rules={"flor": "on"}),
        0,
    )
    add(
        "mal_cantado",
        "penalidad: mal cantado",
        table_at(["0 envido", "1 quiero", "0 declare 30"], rules={"claims": "declared"}),
        0,
    )
    add(
        "show_request",
        "manos sin ver: mostrá",
        table_at(
            ["0 envido", "1 quiero", "0 declare 33", "1 son-buenas", "0 play 7C", "1 play 2O"],
            hands={},
        ),
        0,
    )

    # telling of points (claims=declared)
    telling = table_at(["0 envido", "1 quiero"], rules={"claims": "declared"})
    add("telling_mine", "tanto: tus puntos", telling, 0)
    add("telling_other", "tanto: sigue el 0", telling, 1)
    told = table_at(["0 envido", "1 quiero", "0 declare 33"], rules={"claims": "declared"})
    add("telling_son_buenas", "tanto: ¿más de 33?", told, 1)

    # the end of a hand and of the game
    hand = table_at(
        [
            *("0 envido", "1 quiero", "0 play 3E", "1 play 2O", "0 play 7C", "1 truco"),
            *("0 quiero", "1 play 1B", "1 play 4B", "0 play 6C"),
        ]
    )
    add("hand_won", "mano ganada", hand, 0)
    add("hand_lost", "mano perdida", hand, 1)
    add("game_won", "fin: ganamos", _winning_table(winner=0, past=True), 0)
    add("game_lost", "fin: perdimos", _winning_table(winner=0, past=True), 1)

    # the pad
    add("menu_truco", "botones: truco", _press(table_at(), 0, hold="truco"), 0)
    add(
        "menu_envido",
        "botones: envido",
        _press(table_at(), 0, "envido", hold="envido"),
        0,
    )
    add(
        "menu_no_quiero",
        "botones: no quiero",
        _press(table_at(["0 truco"]), 1, "no_quiero", "no_quiero", hold="no_quiero"),
        1,
    )
    add(
        "number_entry",
        "botones: número",
        _press(table_at(), 0, "envido", "quiero", "falta_envido", hold="envido"),
        0,
    )
    show = _press(table_at(), 0, "envido", "envido", "quiero", hold="envido")
    show.handle(0, TagArrived(DECK.uid(Card.from_str("7C"))))
    add("show_cards", "botones: mostrar", show, 0)

    # the reader unplugged; a table-wide alert
    unplugged = table_at()
    unplugged.handle(1, NodeDisconnected("/dev/truco-seat1", "unplugged"))
    add("reader_unplugged", "lector desenchufado", unplugged, 1)
    # several cards on the seat's reader at once: nothing read, "Una carta por vez"
    stacked = table_at()
    stacked.handle(1, TagConflict())
    add("one_card", "dos cartas en el lector", stacked, 1)
    # seat 1 held quiero and no quiero together: the referee is called
    called = table_at()
    called.referee_called(1)
    add("referee_called", "árbitro: el que llamó", called, 1)
    add("referee_called_other", "árbitro: los demás", called, 0)
    out.append(
        Shot(
            "alert",
            "aviso de la mesa",
            replace(screen_for(table_at(), 1), alert=TableAlert.NO_DISK),
        )
    )
    # a lasting alert reaches the seat whose turn it is (the strip's row says it), and
    # a refusal's banner keeps to the lines then
    out.append(
        Shot(
            "alert_turn",
            "aviso y turno",
            replace(screen_for(table_at(), 0), alert=TableAlert.NO_DISK),
        )
    )
    out.append(
        Shot(
            "alert_refusal",
            "aviso y rechazo",
            replace(screen_for(table_at(["1 play 2O"]), 1), alert=TableAlert.NO_DISK),
        )
    )

    # before a tournament game: the match card (the first deal is being read, no card yet)
    quarter = MatchCard("Cuartos de final", "Los del Fondo", "La Barra", 2, 3)
    add("match_card_home", "partido: local", _match_table(quarter, 4), 0)
    add("match_card_away", "partido: visitante", _match_table(quarter, 4), 3)
    long_names = MatchCard(
        "Grupo A, fecha 1",
        "Club Atlético Independiente de Avellaneda",
        "Asociación Atlética Argentinos Juniors",
        1,
        1,
    )
    add("match_card_long_names", "nombres largos", _match_table(long_names, 2), 1)

    # between chicos: the won game's result held, then what the table plays next
    following = replace(quarter, follows=True)
    add("next_chico", "próximo: local", _after_game(following), 0)
    add("next_chico_away", "próximo: visitante", _after_game(following), 1)
    add("next_waiting", "próximo: espera", _after_game(None), 1)
    add("waiting_desk", "antes: espera", _match_table(None, 2), 0)

    # four and six players
    four = table_at(["0 play 3C", "1 play 2O"], hands=HANDS_4, players=4)
    add("players_4_partner", "4 jugadores: compañero", four, 0)
    add("players_4_turn", "4 jugadores: tu turno", four, 2)
    add(
        "players_4_truco",
        "4 jugadores: truco",
        table_at(["0 play 3C", "1 truco"], hands=HANDS_4, players=4),
        2,
    )
    six = table_at(["0 play 3C", "1 play 2O", "2 play 1B"], hands=HANDS_6, players=6)
    add("players_6_turn", "6 jugadores: tu turno", six, 3)
    add("players_6_other", "6 jugadores: asiento 3", six, 4)
    add(
        "players_6_envido",
        "6 jugadores: envido",
        table_at(["0 envido"], hands=HANDS_6, players=6),
        5,
    )

    # pica-pica at six (RULES.md section 8b): each seat its own pica; the score the teams'
    pica = {"pica_pica": "on"}
    picas = table_at(["0 play 3C", "3 play 7O", "1 truco"], hands=HANDS_6, players=6, rules=pica)
    add("pica_turn_mine", "pica: tu turno", picas, 3)
    add("pica_turn_other", "pica: juega el rival", picas, 0)
    add("pica_truco", "pica: truco para vos", picas, 4)
    add("pica_other_truco", "pica: truco ajeno", picas, 5)
    ended = table_at(["2 mazo", "0 envido", "3 quiero"], hands=HANDS_6, players=6, rules=pica)
    add("pica_ended", "pica: la tuya terminó", ended, 5)
    add("pica_envido", "pica: tu envido", ended, 3)
    return out


#: a refused action for every refusal code: (rules, actions before, refused action)
_REFUSALS: dict[RefusalCode, tuple[dict[str, str], Sequence[str], str]] = {
    RefusalCode.NOT_YOUR_TURN: ({}, (), "1 play 2O"),
    RefusalCode.CARD_NOT_IN_HAND: ({}, (), "0 play 1E"),
    RefusalCode.CARD_ALREADY_PLAYED: ({}, ("0 play 3E", "1 play 2O"), "0 play 3E"),
    RefusalCode.CALL_PENDING: ({}, ("0 truco",), "1 play 2O"),
    RefusalCode.NO_PENDING_CALL: ({}, (), "1 quiero"),
    RefusalCode.RAISE_NOT_ALLOWED: ({}, ("0 truco", "1 quiero"), "0 retruco"),
    RefusalCode.ENVIDO_CLOSED: ({}, ("0 play 3E", "1 play 2O"), "0 envido"),
    RefusalCode.FLOR_DISABLED: ({}, (), "0 flor"),
    RefusalCode.NO_FLOR: ({"flor": "on"}, (), "0 flor"),
    RefusalCode.BAD_DECLARATION: ({}, (), "1 declare 30"),
    RefusalCode.HAND_OVER: ({}, ("0 mazo",), "1 play 2O"),
}


#: the refusals whose message is wider than a caption
_SHORT_REFUSALS = {
    RefusalCode.CALL_PENDING: "canto sin responder",
    RefusalCode.NO_PENDING_CALL: "nada que responder",
}


def refusal_shots() -> list[Shot]:
    """The refusal banner for every ``RefusalCode``, each from a really refused action."""
    out: list[Shot] = []
    for code in RefusalCode:
        if code is RefusalCode.UNKNOWN_CARD:
            table = table_at()
            table.handle(0, TagArrived(bytes(7)))  # no card of the deck
            seat = 0
        elif code is RefusalCode.GAME_OVER:
            table = _winning_table(winner=0)
            table.attempt(Action.from_str("1 play 2O"))
            seat = 1
        else:
            rules, before, refused = _REFUSALS[code]
            table = table_at(before, rules=rules)
            got = table.attempt(Action.from_str(refused))
            if got is not code:
                raise AssertionError(f"{refused!r} gave {got}, not {code}")
            seat = Action.from_str(refused).seat
        title = _SHORT_REFUSALS.get(code, code.message.lower())
        out.append(_shot(f"refusal_{code.value}", title, table, seat))
    return out


def score_shots() -> list[Shot]:
    """Every score of both game lengths, on a screen at the start of a hand (at the
    target: the end of the game)."""
    out: list[Shot] = []
    for target in (30, 15):
        for ours in range(target + 1):
            theirs = target - ours
            if ours == target:
                table = _winning_table(winner=0, target=target, loser_score=0)
            elif theirs == target:
                table = _winning_table(winner=1, target=target, loser_score=0)
            else:
                table = table_at(score=(ours, theirs), rules={"target": str(target)})
            name = f"score_t{target}_{ours:02d}_{theirs:02d}"
            out.append(_shot(name, f"{ours} a {theirs}, a {target}", table, 0))
    return out


def shots() -> list[Shot]:
    """Every screen kind (not every score): the contact sheet."""
    return state_shots() + refusal_shots()
