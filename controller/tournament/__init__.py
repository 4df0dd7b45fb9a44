"""Tournament play: tamper-evident game records (:mod:`controller.tournament.seal`) and
the ``truco-table verify`` / ``truco-table seal`` commands
(:mod:`controller.cli.verify`)."""
