"""``python -m controller.cli``: the ``truco-table`` command."""

import sys

from . import main

sys.exit(main())
