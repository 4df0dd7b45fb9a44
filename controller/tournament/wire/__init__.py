"""What travels between a tournament's tables and its desks, and how it is trusted.

- :mod:`.topics`: the MQTT topics and JSON payloads;
- :mod:`.messages`: the messages as typed values, built and checked in one place;
- :mod:`.seal`: sealed game records (a chain of HMAC-SHA256 over the record's lines);
- :mod:`.keys`: each table's key, derived from the tournament's secret.

Pure but for reading and writing key files: both sides (:mod:`..table`, :mod:`..desk`,
:mod:`..league`) import it, and it imports neither.
"""
