"""The venue's broker: the Mosquitto a bar or a tournament hall runs for its tables.

- :mod:`.broker`: its configuration, accounts, ACLs, TLS certificates and the tables'
  keys, as ``truco-table venue-broker`` writes them;
- :mod:`.access`: how a table or a desk logs in to it (account, password, TLS).

A league's bridge from a venue's broker to the central one is in
:mod:`..league.bridge`.
"""
