"""A league across bars: clubs (venues), entrants, a double round robin, standings, and
each venue's broker bridged to the league's central broker.

- :mod:`.model`: the league's values, :mod:`.errors` its refusals (Spanish);
- :mod:`.fixture`: the fixture by Berger tables (home and away alternating);
- :mod:`.standings`: results of matches (best of N chicos), the standings, a venue's view;
- :mod:`.keys`: a venue's secret derived from the league's, its tables' keys from it;
- :mod:`.bridge`: a venue's folder, accounts and Mosquitto bridge, the central broker's
  accounts and ACL (``truco-table league add-venue``);
- :mod:`.verify`: the league desk's check of one sealed record from a venue;
- :mod:`.inbox`: a venue's message read at the central broker (its mac checked);
- :mod:`.collect`: the league desk's count of the checked records;
- :mod:`.ledger`: the league desk's tamper-evident journal of them (the desk's own);
- :mod:`.desk`: the league desk's link to the central broker (MQTT, the journal);
- :mod:`.codec`: the league read from its folder's ``league.toml``.

All but :mod:`.bridge`, :mod:`.ledger` and :mod:`.desk` are pure (no I/O, no clock).
"""
