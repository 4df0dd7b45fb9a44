"""Why the competition refuses an action: one class per reason, each a
:class:`~.model.CompetitionError` whose text (Spanish, for the organiser) says what to do.

The fold (:func:`.tournament.apply`) raises them and leaves the tournament as it was; the
desk shows the message as is (one line, no traceback).
"""

from __future__ import annotations

from .model import CompetitionError

__all__ = [
    "ActionJsonError",
    "AlreadyStarted",
    "AlreadyWithdrawn",
    "DuplicateEntrant",
    "DuplicateGame",
    "EntrantsCsvError",
    "InvalidEntrant",
    "InvalidFormat",
    "InvalidPairings",
    "InvalidResult",
    "InvalidSeeding",
    "InvalidTable",
    "MatchAlreadyDecided",
    "MatchNotAssignable",
    "NotAtThatTable",
    "NotEnoughEntrants",
    "NotInThatMatch",
    "NotStarted",
    "PairingsFixed",
    "ReasonRequired",
    "RegistrationClosed",
    "ResultLocked",
    "RoundNotClosed",
    "RoundUndecidable",
    "SwissPairingImpossible",
    "TableBusy",
    "TournamentFinished",
    "UnknownEntrant",
    "UnknownGroup",
    "UnknownMatch",
    "UnsafeText",
    "WrongRound",
]


class InvalidEntrant(CompetitionError):
    """An entrant's name, players or id is not acceptable."""


class EntrantsCsvError(CompetitionError):
    """The entrants' spreadsheet (CSV) has bad lines (or cannot be read at all): the text
    names every one (joined by " · "), :attr:`problems` lists them one by one."""

    def __init__(self, text: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(text)
        self.problems = problems or (text,)


class UnsafeText(InvalidEntrant):
    """A text the organiser typed (a name, a reason) has a control character or a
    bidirectional override: it could clear a terminal or show reversed on a page."""


class DuplicateEntrant(CompetitionError):
    """An entrant with that id or that team name is already registered."""


class UnknownEntrant(CompetitionError):
    """No entrant has that id."""


class UnknownMatch(CompetitionError):
    """No match has that id."""


class UnknownGroup(CompetitionError):
    """No group has that letter."""


class InvalidTable(CompetitionError):
    """A table id that is not topic-safe."""


class InvalidSeeding(CompetitionError):
    """The seeding names an entrant twice, or one that is not registered."""


class InvalidFormat(CompetitionError):
    """The format's settings do not make a tournament (best of 2, 0 rounds, ...)."""


class AlreadyStarted(CompetitionError):
    """Start or Seed after the tournament started."""


class NotStarted(CompetitionError):
    """A round, a table or a result before the tournament started."""


class NotEnoughEntrants(CompetitionError):
    """Start with fewer than two entrants (or groups that cannot be filled)."""


class RegistrationClosed(CompetitionError):
    """A late entry in a format that takes none (only the swiss takes late entries)."""


class TournamentFinished(CompetitionError):
    """Anything but a correction (an override) after the last match was decided."""


class AlreadyWithdrawn(CompetitionError):
    """The entrant already withdrew."""


class ReasonRequired(CompetitionError):
    """A withdrawal, walkover or override without a reason."""


class WrongRound(CompetitionError):
    """PairRound or CloseRound names a round that is not the next / the current one."""


class RoundNotClosed(CompetitionError):
    """The next round is paired while the current one still has matches to decide."""


class RoundUndecidable(CompetitionError):
    """CloseRound with a match level in games and points: it needs a walkover or an
    override first (the text names the match)."""


class InvalidPairings(CompetitionError):
    """The organiser's pairings leave someone out, name someone twice, or do not make a
    bracket."""


class PairingsFixed(CompetitionError):
    """The organiser's pairings where the format fixes them (the round robin's fixture,
    the bracket after its first round)."""


class SwissPairingImpossible(CompetitionError):
    """No swiss pairing of the round avoids a repeated match."""


class MatchNotAssignable(CompetitionError):
    """AssignTable for a match that is already being played or is decided."""


class TableBusy(CompetitionError):
    """AssignTable to a table that has another match still to finish."""


class NotAtThatTable(CompetitionError):
    """A game counted from a table the match is not assigned to (or from any table when
    the match has none)."""


class MatchAlreadyDecided(CompetitionError):
    """A game, walkover or forced close for a match that is already decided."""


class DuplicateGame(CompetitionError):
    """The same game (record) counted twice."""


class NotInThatMatch(CompetitionError):
    """A walkover or override whose winner does not play that match."""


class InvalidResult(CompetitionError):
    """An override or a game whose figures contradict themselves."""


class ResultLocked(CompetitionError):
    """An override of a knockout match whose winner already plays the next round."""


class ActionJsonError(CompetitionError):
    """A journal line that is not a valid action (version, type or fields)."""
