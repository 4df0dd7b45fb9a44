"""``truco-table rekey``: a table's new key, after a key conflict, from the code the
organiser's page shows.

::

    truco-table rekey --config /etc/truco-table/table.toml ABCD-EFGH-JKMN-PQRS

When someone else holds a table's key (the desk saw two messages under one number), the
organiser presses «Cambiar la clave» on that item of the page and reads out the one-time
code it shows; someone at the real table runs this with it. The table's key file (the
``key_file`` of its ``[tournament]`` section) is replaced by ``HMAC(old key, code)``
(:func:`controller.tournament.wire.keys.rekeyed`), 0600, atomically; the desk derived
the same key when it gave the code. Restart the table (``systemctl restart
truco-table``): it carries on under the new key, and the copy of the old one is refused.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import TextIO

__all__ = ["configure", "run_rekey"]


def run_rekey(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from ..tournament.wire.keys import rekey_code, rekeyed, write_private
    from ..tournament.wire.seal import KeyConfigError, load_key

    out = out or sys.stdout
    config = Path(args.config)
    try:
        code = rekey_code(args.code)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    try:
        section = tomllib.loads(config.read_text(encoding="utf-8")).get("tournament")
    except OSError as e:
        print(f"No se puede leer {config}: {e.strerror or 'error de lectura'}", file=sys.stderr)
        return 2
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        print(f"{config} no es una configuración de mesa (TOML)", file=sys.stderr)
        return 2
    name = section.get("key_file") if isinstance(section, dict) else None
    if not isinstance(name, str) or not name:
        print(f"{config} no nombra la clave de la mesa (key_file en [tournament])",
              file=sys.stderr)  # fmt: skip
        return 2
    path = config.parent / Path(name).expanduser()
    try:
        old = load_key(path, kind="key-file")
    except KeyConfigError as e:
        print(f"No se puede leer la clave de la mesa ({path}): {e}", file=sys.stderr)
        return 2
    new = rekeyed(old.key, code)
    try:
        write_private(
            path, f"# the key of this table, re-keyed with a code\n{new.hex()}\n".encode()
        )
    except OSError as e:
        print(f"No se pudo escribir {path}: {e.strerror or e}", file=sys.stderr)
        return 74
    out.write(
        f"Clave nueva de la mesa en {path}. Reiniciá la mesa (systemctl restart truco-table) "
        "para que siga con ella.\n"
    )
    return 0


def configure(r: argparse.ArgumentParser) -> None:
    """The ``rekey`` subcommand's arguments (its ``func`` is :func:`run_rekey`)."""
    r.description = (
        "Cambia la clave de la mesa con el código que muestra la página del organizador "
        "después de un choque de claves (alguien más tenía la clave de esta mesa)."
    )
    r.add_argument("--config", required=True, metavar="ARCHIVO",
                   help="la configuración de la mesa, con su sección [tournament]")  # fmt: skip
    r.add_argument("code", metavar="CÓDIGO", help="el código de la página: ABCD-EFGH-JKMN-PQRS")
    r.set_defaults(func=run_rekey)
