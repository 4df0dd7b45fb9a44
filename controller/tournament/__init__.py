"""Tournaments and leagues: tables that report to an organiser's desk over MQTT.

One folder per side, each a room a newcomer finds from its name:

- :mod:`.table`: the table's side (its publisher, outbox, assigned match, profile);
- :mod:`.wire`: what travels and how it is trusted (topics, messages, seals, keys);
- :mod:`.venue`: the venue's Mosquitto (accounts, ACLs, TLS) and how clients log in;
- :mod:`.desk`: the organiser's desk (its state, journal, referee list, pages, exports);
- :mod:`.competition`: formats, pairings and standings (pure);
- :mod:`.league`: a league across bars (fixture, bridges, the league desk);
- :mod:`.sim`: simulations on this machine (local brokers, cut networks, demo tables).

``controller.table`` never imports this package: ``controller.cli.service`` attaches the
table's tournament link to the table service. The ``truco-table verify`` / ``seal``
commands are :mod:`controller.cli.verify`.
"""
