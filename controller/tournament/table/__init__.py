"""The table's side of a tournament: what runs on the Pi at a tournament's table.

- :mod:`.link`: the ``[tournament]`` section of the table's configuration, and
  :func:`~.link.connect_table`, which attaches the publisher to the table's service;
- :mod:`.publisher`: the table's events and sealed records published over MQTT;
- :mod:`.outbox`: everything the table must deliver, journaled on disk first;
- :mod:`.match`: the match the desk assigned, and which chico each game was;
- :mod:`.profile`: the tournament's refereeing profile (strict rules, a full record).

It imports the table (``controller.table``) and the wire (:mod:`..wire`); the table
never imports it: ``controller.cli.service`` attaches it to the service.
"""
