"""truco-table: a Raspberry Pi that referees Argentine Truco played with real cards.

Subpackages, outermost last:

- ``controller.engine``: the pure rules engine (no I/O, no clock, no global randomness).
- ``controller.transcript``: the plain-text game record (read and write).
- ``controller.hal``: the hardware ports (buttons, card readers, displays), real and mock.
- ``controller.render``: Pillow drawing of the seat screens.
- ``controller.cli``: the ``truco-table`` command.
"""

__version__ = "0.1.0"
