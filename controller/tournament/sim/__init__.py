"""Simulations on this machine: real brokers on 127.0.0.1, simulated tables, the desks.

- :mod:`.mosquitto`: a local Mosquitto as a child process (and the ports it listens on);
- :mod:`.netsim`: a network that can be cut (a TCP relay);
- :mod:`.demo`: N mock tables playing with bots, published to one desk
  (``truco-table tournament-demo``, ``sh scripts/tournament``);
- :mod:`.cup`: a whole tournament, from registration to the final standings
  (``tournament-demo --format``);
- :mod:`.league`: a league's matchday over three bridged venues (``sh scripts/league``);
- :mod:`.flood`: a stolen table key's flood of authenticated junk;
- :mod:`.told`: a recorded game told again as its table tells it while it plays.

The table, the desks and the league import none of these; ``truco-table tournament-demo``
(:mod:`controller.cli.desk`), ``sh scripts/league``, the tests and the benchmarks do.
"""
