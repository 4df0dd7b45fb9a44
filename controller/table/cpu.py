"""The CPU the table's loop keeps to (``[table] loop_cpu`` in the configuration).

The service's loop (``TableService.run``: the seats' ports, the table, the record, the
panels) is woken by every player's event and spends most of each wake getting its code
and data back into the CPU's caches. Left to the scheduler it is woken wherever the
event's interrupt and the kernel's work on it ran, often a CPU that something else just
used (the kernel's USB work, which a Raspberry Pi takes on CPU 0, journald, the
broadcast pages); kept on one CPU it finds there what it left. ``"last"`` (the default
and what ``scripts/install-pi`` writes) keeps it on the last CPU the process may run on,
away from CPU 0, when it may run on two or more; a number keeps it on that CPU;
``"none"`` leaves it where the scheduler puts it. Only the loop's thread is kept (the
threads started before it, such as the broadcast pages' server, run anywhere); threads it
starts later inherit its CPU. What it is worth on ``bench/table.py``:
docs/dev/benchmarks.md, "A tenth pass".
"""

from __future__ import annotations

import logging
import os
from typing import Final, Literal, TypeAlias

__all__ = ["LAST", "LOOP_CPU_CHOICES", "NONE", "LoopCpu", "keep_loop_on"]

log = logging.getLogger(__name__)

LAST: Final = "last"
NONE: Final = "none"
#: the words ``loop_cpu`` takes besides a CPU's number
LOOP_CPU_CHOICES: Final = (LAST, NONE)
#: a CPU's number, or one of ``LOOP_CPU_CHOICES``
LoopCpu: TypeAlias = int | Literal["last", "none"]


def keep_loop_on(choice: LoopCpu) -> int | None:
    """Keep the calling thread (the loop's) on the CPU ``choice`` names; returns that
    CPU, or None when the thread is left where the scheduler puts it (``"none"``, a
    process allowed one CPU only, a system that cannot say, or a CPU the process may not
    use: then logged, and the table runs all the same)."""
    if choice == NONE:
        return None
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):  # not Linux: nothing to keep
        return None
    if choice == LAST:
        if len(allowed) < 2:
            return None
        cpu = max(allowed)
    else:
        cpu = choice
        if cpu not in allowed:
            log.warning(
                "loop_cpu = %d: la mesa no puede usar esa CPU (puede usar %s); el bucle "
                "corre donde lo ponga el sistema",
                cpu,
                _listed(allowed),
            )
            return None
    try:
        os.sched_setaffinity(0, {cpu})  # 0: the calling thread alone
    except OSError as error:
        log.warning(
            "no pude dejar el bucle de la mesa en la CPU %d (%s); corre donde lo ponga el sistema",
            cpu,
            error.strerror or error,
        )
        return None
    log.info("el bucle de la mesa corre en la CPU %d", cpu)
    return cpu


def _listed(cpus: set[int]) -> str:
    return ", ".join(str(cpu) for cpu in sorted(cpus))
