"""The competition: entrants, formats, rounds and pairings, matches, standings.

Pure (no I/O, no clock, no randomness), as the engine is: :mod:`.model` holds the
values, :mod:`.tournament` the fold of the organiser's journal into a
:class:`~.model.Tournament` (``apply``, ``replay``, ``next_pairings``,
``final_ranking``), :mod:`.pairing` who plays whom in each format, :mod:`.standings` the
table and its tie-breaks, :mod:`.entrants` the entrants' checks and the organiser's CSV,
:mod:`.codec` the journal's JSON lines and :mod:`.errors` every refusal. The rules for
organisers: docs/TOURNAMENT.md. The desk (:mod:`controller.tournament.desk`) keeps the
journal on disk and feeds it the tables' verified records.
"""
