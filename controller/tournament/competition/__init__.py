"""The competition: entrants, formats, rounds and pairings, matches, standings.

Pure (no I/O, no clock, no randomness), as the engine is: :mod:`.model` holds the
values, :mod:`.tournament` the fold of the organiser's journal into a
:class:`~.model.Tournament`. The desk (:mod:`controller.tournament.desk`) keeps the
journal on disk and feeds it the tables' verified records.
"""
