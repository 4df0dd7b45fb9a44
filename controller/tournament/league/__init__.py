"""A league across bars: clubs (venues), entrants, a double round robin, standings.

- :mod:`.model`: the league's values and its errors (pure: no I/O, no clock);
- :mod:`.fixture`: the fixture by Berger tables (home and away alternating);
- :mod:`.table`: results of matches (best of N chicos) and the standings, whole and by venue;
- :mod:`.bridge`: a venue's keys, accounts and Mosquitto bridge to the central broker
  (``truco-table league add-venue``).
"""
