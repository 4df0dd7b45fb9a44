"""What the terminal faces say about actions and points, in Spanish (and English).

The seat displays speak Spanish only (``controller.render.screen``); the text the
terminal writes around them follows ``--lang`` (``es``, the default, or ``en``).
"""

from __future__ import annotations

from typing import Final

from ..engine import Action, Kind
from ..engine.results import Reason

__all__ = ["ACTION_WORDS", "LANGS", "REASON_WORDS", "REFUSED_WORDS", "YOUR_WORDS", "say_action"]

LANGS: Final = ("es", "en")

ACTION_WORDS: Final[dict[str, dict[Kind, str]]] = {
    "es": {
        Kind.PLAY: "juega",
        Kind.TRUCO: "¡truco!",
        Kind.RETRUCO: "¡quiero retruco!",
        Kind.VALE_CUATRO: "¡quiero vale cuatro!",
        Kind.ENVIDO: "envido",
        Kind.REAL_ENVIDO: "real envido",
        Kind.FALTA_ENVIDO: "falta envido",
        Kind.FLOR: "¡flor!",
        Kind.CONTRAFLOR: "contraflor",
        Kind.CONTRAFLOR_AL_RESTO: "contraflor al resto",
        Kind.CON_FLOR_ME_ACHICO: "con flor me achico",
        Kind.QUIERO: "quiero",
        Kind.NO_QUIERO: "no quiero",
        Kind.MAZO: "me voy al mazo",
        Kind.DECLARE: "tengo",
        Kind.SON_BUENAS: "son buenas",
        Kind.SHOW: "muestra",
    },
    "en": {
        Kind.PLAY: "plays",
        Kind.TRUCO: "truco!",
        Kind.RETRUCO: "retruco!",
        Kind.VALE_CUATRO: "vale cuatro!",
        Kind.ENVIDO: "envido",
        Kind.REAL_ENVIDO: "real envido",
        Kind.FALTA_ENVIDO: "falta envido",
        Kind.FLOR: "flor!",
        Kind.CONTRAFLOR: "contraflor",
        Kind.CONTRAFLOR_AL_RESTO: "contraflor al resto",
        Kind.CON_FLOR_ME_ACHICO: "con flor me achico (gives in)",
        Kind.QUIERO: "quiero (accepts)",
        Kind.NO_QUIERO: "no quiero (declines)",
        Kind.MAZO: "goes to the mazo (folds)",
        Kind.DECLARE: "declares",
        Kind.SON_BUENAS: "son buenas (concedes)",
        Kind.SHOW: "shows",
    },
}

#: the player's own actions, said to them (vos): "jugás 7E", "mostrás 4C 6C"
YOUR_WORDS: Final[dict[str, dict[Kind, str]]] = {
    "es": {Kind.PLAY: "jugás", Kind.SHOW: "mostrás"},
    "en": {Kind.PLAY: "play", Kind.SHOW: "show"},
}

#: a refused raise said as it was called: nobody said quiero to it ("¡retruco!", not
#: "¡quiero retruco!", which only an accepted truco's raise is)
REFUSED_WORDS: Final[dict[str, dict[Kind, str]]] = {
    "es": {Kind.RETRUCO: "¡retruco!", Kind.VALE_CUATRO: "¡vale cuatro!"},
    "en": {},
}

REASON_WORDS: Final[dict[str, dict[Reason, str]]] = {
    "es": {
        Reason.ENVIDO: "envido",
        Reason.FLOR: "flor",
        Reason.TRUCO: "la mano",
        Reason.MAZO: "al mazo",
        Reason.MAZO_ENVIDO: "mazo sin envido",
        Reason.PENALTY: "penalidad",
    },
    "en": {
        Reason.ENVIDO: "envido",
        Reason.FLOR: "flor",
        Reason.TRUCO: "the hand",
        Reason.MAZO: "mazo (the others folded)",
        Reason.MAZO_ENVIDO: "mazo with no envido",
        Reason.PENALTY: "penalty",
    },
}


def say_action(
    action: Action, lang: str = "es", *, yours: bool = False, refused: bool = False
) -> str:
    """The action in words: ``juega 7E``, ``tengo 33``, ``muestra 7E 6E``; ``yours``:
    the player's own, said to them (``jugás 7E``, ``mostrás 7E 6E``); ``refused``: an
    action the table refused, said as it was tried (``¡retruco!``)."""
    words = ACTION_WORDS[lang][action.kind]
    if refused:
        words = REFUSED_WORDS[lang].get(action.kind, words)
    if yours:
        words = YOUR_WORDS[lang].get(action.kind, words)
    return words + action.objects
