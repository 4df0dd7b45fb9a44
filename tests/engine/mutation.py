"""Mutation check of the engine: do the tests notice when the rules' code is changed?

Each mutant changes one thing in ``controller/engine/game.py`` or ``hand.py`` (or, with
``--file claims.py`` / ``--file controls.py``, the pads' meaning in ``controller/table``,
killed by its own tests ``tests/table/test_claims.py`` and ``test_controls.py``): a comparison
flipped (``<`` and ``<=``, ``==`` and ``!=``, ``is`` and ``is not``, ``in`` and ``not in``),
an integer constant moved by one, ``and`` and ``or`` swapped, a ``not`` dropped, ``+`` and
``-`` swapped, ``True`` and ``False`` swapped. The mutant runs in a fresh interpreter
against the killer suite (``mutation_suite.py``): every scenario and its mirror
(tests/scenarios), seeded random games under the property tests' checks, the façade's
unit tests, and the perft counts. A mutant is killed
when the suite fails (or runs past the time limit); it survives when the suite passes.

Not part of the default test run (it takes minutes). Run it with::

    .venv/bin/python -m tests.engine.mutation [--budget SECONDS] [--file hand.py] [--seed N]
    .venv/bin/python -m tests.engine.mutation --at hand.py:75 --at game.py:95  # those lines

With a budget smaller than the whole run, a seeded random sample of the mutants is run
(the score is over those). Survivors are printed with their line, for a person to judge:
equivalent (no behaviour can tell them apart) or a missing test. Those judged equivalent
are listed in ``EQUIVALENT`` with the reason; the score line also gives the score over
the non-equivalent mutants.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "controller" / "engine"
TABLE = ROOT / "controller" / "table"
FILES = ("game.py", "hand.py")
#: The pads' meaning (``--file claims.py``): killed by their own tests, not the engine's.
TABLE_FILES = ("claims.py", "controls.py")
TABLE_TESTS = ("tests/table/test_claims.py", "tests/table/test_controls.py")
_DIR = {**{f: ENGINE for f in FILES}, **{f: TABLE for f in TABLE_FILES}}

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}


#: Survivors a person judged equivalent (no behaviour can tell them from the engine), by
#: (file, enclosing function, the line's code, mutation): the reason. A survivor not in
#: it is a missing test until judged; a line whose code changed is judged again.
EQUIVALENT: dict[tuple[str, str, str, str], str] = {
    ("game.py", "Game._clear_hand", "self._dealer = -1", "1 -> 0"):
        "read only through Game.dealer (None while no hand was dealt) and state_key, "
        "where every state without a hand carries the same constant",
    ("game.py", "Game._clear_hand", "self._dealer = -1", "1 -> 2"):
        "read only through Game.dealer (None while no hand was dealt) and state_key, "
        "where every state without a hand carries the same constant",
    ("game.py", "Game._clear_hand", "self._mano = -1", "1 -> 2"):
        "read only through Game.mano, None while no hand was dealt (the only time it runs)",
    ("game.py", "Game._hand_end",
     "self._live = len(plays) > 1 and any(p.live for p in plays)", "1 -> 2"):
        "a hand has one play or three (pica-pica): > 2 and > 1 say the same",
    ("game.py", "Game._hand_end",
     "self._live = len(plays) > 1 and any(p.live for p in plays)", "Gt -> GtE"):
        "called when a play ended: with one play any(p.live) is False either way",
    ("game.py", "Game._start_hand",
     "HandPlay(rules, board, deal, ((mano + i) % n, (mano + i + 3) % n), pica=True)",
     "Add -> Sub"):
        "the one of the line's three that survives is + 3 -> - 3: the same seat modulo 6, "
        "and pica-pica is played only at six (the other two change the picas: killed)",
    ("game.py", "Game._clear_hand", "self._mano = -1", "1 -> 0"):
        "read only through Game.mano, None while no hand was dealt (the only time it runs)",
    ("game.py", "Game._clear_hand",
     "play = HandPlay(self.rules, self._board, self._deal, self._orders[0])", "0 -> 1"):
        "the play before any deal is never live: no turn, order or action is read from it",
    ("game.py", "Game._clear_hand", "play.live = False", "False -> True"):
        "every reader of the play's liveness checks Game._live (False before a deal) first",
    ("game.py", "Game._the_play", "if len(plays) > 1:", "1 -> 2"):
        "a hand has one play or three (pica-pica): > 2 and > 1 say the same",
    ("game.py", "Game.turn", "return play.turn if self._live and play.live else None",
     "And -> Or"):
        "asked of a normal hand only (a pica-pica hand raises): its one play is live "
        "exactly while the hand is, and both are False between hands",
    ("game.py", "Game._start_hand", "play_of = [plays[0]] * n", "0 -> 1"):
        "every seat is in one of the three picas: the loop below overwrites every entry",
    ("game.py", "Game._hand_end",
     "self._live = len(plays) > 1 and any(p.live for p in plays)", "1 -> 0"):
        "called when a play ended: with one play any(p.live) is False either way",
    ("hand.py", "Deal.__init__", "self.env: list[int] = [0] * n", "0 -> 1"):
        "a seat's envido points are read only when its cards are known (then computed)",
    ("hand.py", "Deal.card_refusal",
     "elif len(self.seen[s]) >= 3 and c not in self.seen[s]:", "3 -> 2"):
        "asked only for an illegal card of the seat in turn; with fewer than three seen "
        "every unseen card not another seat's is legal, so the branch is never decisive",
    ("hand.py", "Deal.card_refusal",
     "elif len(self.seen[s]) >= 3 and c not in self.seen[s]:", "And -> Or"):
        "as above: an unknown seat's illegal card is another seat's or played (caught first)",
    ("hand.py", "TrucoPhase.__init__", "self.caller = -1", "1 -> 0"):
        "written with every call before pending is set, read only while a call is pending",
    ("hand.py", "TrucoPhase.__init__", "self.caller = -1", "1 -> 2"):
        "written with every call before pending is set, read only while a call is pending",
    ("hand.py", "TrucoPhase.apply", "self.pending = 0", "0 -> 1"):
        "the no quiero ends the play: HandPlay.finish sets pending to 0 right after",
    ("hand.py", "EnvidoPhase.__init__", "self.caller = -1", "1 -> 2"):
        "written with every envido call, read only while one is pending",
    ("hand.py", "TellingPhase.__init__", "self.best = -1", "1 -> 2"):
        "compared only with declarable numbers, all >= 0",
    ("hand.py", "TellingPhase.__init__", "self.best_seat = -1", "1 -> 2"):
        "only ever tested as >= 0",
    ("hand.py", "TellingPhase.next_declarer",
     "best_team = team_of(self.best_seat) if self.best_seat >= 0 else -1", "1 -> 2"):
        "compared with a seat's team (0 or 1): -1 and -2 both match none",
    ("hand.py", "TellingPhase.next_declarer", "return -1", "1 -> 2"):
        "callers test < 0 / >= 0; a finished telling is resolved before legal() reads it",
    ("hand.py", "FlorPhase.__init__", "self.backdown = 0", "0 -> 1"):
        "set by the back-down before the only read (the backed course)",
    ("hand.py", "FlorPhase.late", "self._announcements(h, out, True)", "True -> False"):
        "late() runs only when no known holder is awaited, so no known seat may announce",
    ("hand.py", "FlorPhase._settle", 'h.defer(("flores", team, seats, 0, points, points))',
     "0 -> 1"):
        "the value of a set of flores is never read (each flor is proven by its suit)",
    ("hand.py", "HandPlay.__init__", "self.cap = PICA_CAP if pica else 1 << 30", "30 -> 29"):
        "no envido or flor is worth 2**29 points: the cap of a normal hand never binds",
    ("hand.py", "HandPlay.__init__", "self.cap = PICA_CAP if pica else 1 << 30", "30 -> 31"):
        "no envido or flor is worth 2**29 points: the cap of a normal hand never binds",
    ("hand.py", "HandPlay.__init__", "self.cap = PICA_CAP if pica else 1 << 30", "1 -> 2"):
        "no envido or flor is worth 2**29 points: the cap of a normal hand never binds",
    ("hand.py", "HandPlay.play", "best = -1", "1 -> 2"):
        "every card's strength is >= 0, so the first card sets it either way",
    ("hand.py", "HandPlay.hand_winner", "return team_of(self.mano) if r[0] < 0 else r[0]",
     "0 -> 1"):
        "of the line's three 0 -> 1 mutants, the condition's r[0] -> r[1] survives: a "
        "third baza follows a parda first baza only after a parda second and the other "
        "way round, so r[0] and r[1] are both parda or neither (r[0] < 1 and the "
        "returned r[1] are killed)",
    ("hand.py", "HandPlay.finish",
     "if flor.state is _FLOR_OPEN and self.tell is None and not flor.blocking(self):",
     "Is -> IsNot"):
        "dead condition: apply closes an open flor before any action that can end the "
        "play, and a telling never ends a play",
    ("hand.py", "HandPlay.best_of", "best_seat, best = -1, -1", "1 -> 2"):
        "points are >= 0: the first member in play order replaces both",
    ("hand.py", "HandPlay.best_of", "best_seat, best = -1, -1", "1 -> 0"):
        "of the line's two, best_seat -1 -> 0 survives: points are >= 0, so the first "
        "member in play order replaces it (best -1 -> 0 is killed: "
        "test_an_envido_of_zero_all_round_goes_to_the_mano)",
    ("hand.py", "Deal._points", "self.ready = True", "True -> False"):
        "a cache flag: left False the points are worked out again at every read, the same "
        "points from the same cards",
    ("hand.py", "_Layout.__init__", "nxt = [-1] * players", "1 -> 0"):
        "the loop below sets the next seat of every seat of the play; the others' entries "
        "(a pica's other seats) are never read: a seat plays only in its own play",
    ("hand.py", "_Layout.__init__", "nxt = [-1] * players", "1 -> 2"):
        "the loop below sets the next seat of every seat of the play; the others' entries "
        "(a pica's other seats) are never read: a seat plays only in its own play",
    ("hand.py", "FlorPhase.progress",
     "course in (_COURSE_CONTRA, _COURSE_RESTO) and self.accepted", "And -> Or"):
        "accepted is True only after a quiero, which leaves the course a contraflor or al "
        "resto; and that course with no answer awaited comes only from a quiero (a "
        "refusal sets the backed course): either half says the same",
    ("hand.py", "HandPlay.award", "if board.winner is not None or points <= 0:",
     "LtE -> Lt"):
        "no award is of 0 points: every value the rules give is at least 1 (a falta is "
        "the distance to a target nobody reached yet, a backed-down flor 4 or 6)",
    ("hand.py", "HandPlay.finish",
     "if flor.state is _FLOR_OPEN and self.tell is None and not flor.blocking(self):",
     "drop not"):
        "dead condition: apply closes an open flor before any action that can end the "
        "play, and a telling never ends a play",
    ("hand.py", "TrucoPhase.__init__", "self.raiser = -1", "1 -> 2"):
        "read only once a truco was accepted (which sets it), or tested >= 0",
    ("hand.py", "<module>",
     "_S_TRUCO = (0, _KS + K_TRUCO, _KS + K_RETRUCO, _KS + K_VALE_CUATRO)", "0 -> 1"):
        "the first slot is a placeholder: the truco slots are asked by level, 1 to 3",
    ("hand.py", "HandPlay.falta", "lead = a if a > b else b", "Gt -> GtE"):
        "with a == b either is the lead",
    ("hand.py", "<module>",
     "_ENV_VALUE = {K_ENVIDO: 2, K_REAL_ENVIDO: 3, K_FALTA_ENVIDO: 0}", "0 -> 1"):
        "the falta's slot is never summed: a falta is always the chain's last call (never "
        "in the refused chain's earlier calls) and an accepted chain with it is the falta",
    ("hand.py", "HandPlay.play", "best = -1", "1 -> 0"):
        "every card's strength is >= 1 (the 4s): the first card sets it either way",
    ("hand.py", "HandPlay.play", "result = -1", "1 -> 2"):
        "a parda is only ever tested as < 0 (baza results, the hand's winner)",
    ("hand.py", "FlorPhase.apply", "self._raise(_COURSE_CONTRA, team, 0)", "0 -> 1"):
        "what a refused al resto is worth is read only under an al resto course, whose "
        "_raise sets it (4 or 6); a refused contraflor is worth 4 whatever it says",
    ("hand.py", "FlorPhase.__init__", "self.resto_before = 0", "0 -> 1"):
        "read only under an al resto course, whose _raise sets it first",
    ("hand.py", "EnvidoPhase.__init__", "self.caller = -1", "1 -> 0"):
        "written with every envido call, read only while one is pending",
    ("hand.py", "FlorPhase.__init__", "self.accepted = False", "False -> True"):
        "read only with the course a contraflor or al resto and no answer awaited, which "
        "only its quiero leads to (a refusal sets the backed course, a raise awaits an "
        "answer, and nothing raises after a quiero)",
    ("claims.py", "<module>", "@dataclass(frozen=True, slots=True)", "True -> False"):
        "of the line's two, slots=False survives: slots only save memory, and a frozen "
        "class refuses every assignment either way (frozen=False is killed: "
        "test_a_claim_is_a_value)",
    ("claims.py", "near_the_end", "return game.hand_in_progress and any(", "And -> Or"):
        "a play is live only while its hand is in progress (Game._hand_end keeps the hand "
        "live while any pica is), so the any(p.live and ...) alone says the same",
    ("claims.py", "penalty_notes",
     "for i, note in zip(tail, unshown[-len(tail) :] if tail else [], strict=True):",
     "True -> False"):
        "both sides always have len(tail) items: strict never raises",
    ("controls.py", "<module>", "@dataclass(frozen=True, slots=True)", "True -> False"):
        "of the line's two, slots=False survives: slots only save memory, and a frozen "
        "class refuses every assignment either way (frozen=False is killed: "
        "test_a_gesture_reads_as_written_and_is_a_value)",
    ("controls.py", "SeatInput", "index: int = 0", "0 -> 1"):
        "the index is read only in a menu, and the only way into a menu (on_hold) sets it to 0",
    ("controls.py", "SeatInput.reset",
     "self.mode, self.menu, self.index, self.shown = Mode.NORMAL, None, 0, []", "0 -> 1"):
        "the index is read only in a menu, and the only way into a menu (on_hold) sets it to 0",
    ("controls.py", "SeatInput", "number: int = 0", "0 -> 1"):
        "the number is read only in number entry, and every way into it sets it first "
        "(start_number_entry: on choosing declarar, and the table's after every action "
        "while a telling is on)",
    ("controls.py", "step_number",
     "above = [v for v in values if v > number] if step > 0 else []", "Gt -> GtE"):
        "the line's two: v >= number (number is not one of the values here: the branch "
        "above returned) and step >= 0 (step is 1 or -1 here)",
    ("controls.py", "step_number",
     "below = [v for v in values if v < number] if step < 0 else []", "Lt -> LtE"):
        "the line's two: v <= number (number is not one of the values here: the branch "
        "above returned) and step <= 0 (step is 1 or -1 here)",
    ("controls.py", "step_number",
     "below = [v for v in values if v < number] if step < 0 else []", "0 -> 1"):
        "step < 1: step is 1 or -1 here, so the same as step < 0",
    ("controls.py", "step_number", "if step > 0:", "Gt -> GtE"):
        "step is 1 or -1 here: step >= 0 is step > 0",
    ("controls.py", "start_number_entry", "best = -1", "1 -> 2"):
        "every declarable value is >= 0: the first above -1 and above -2 is the lowest",
    ("controls.py", "start_number_entry", "best = max(declared, default=-1)", "1 -> 2"):
        "every declarable value is >= 0: the first above -1 and above -2 is the lowest",
    ("controls.py", "_number_presses", "while frontier and target not in paths:", "And -> Or"):
        "the search goes on past the target, but breadth first records a value's path "
        "once, when first reached: the target's path is the same",
    ("controls.py", "SeatInput.entry",
     "if self.mode is not Mode.MENU or self.menu is None:", "Or -> And"):
        "a seat is in a menu exactly when its menu is set (on_hold sets both, reset "
        "clears both), so the two halves are never apart",
}  # fmt: skip


def _where(file: str) -> dict[int, tuple[str, str]]:
    """Each line of ``file``: its enclosing function (``Class.method``) and its code
    (comment and indentation off), for :data:`EQUIVALENT`."""
    source = (_DIR[file] / file).read_text()
    lines = source.splitlines()
    out: dict[int, tuple[str, str]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                for n in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    out[n] = (name, lines[n - 1].split("#")[0].strip())
                visit(child, f"{name}.")

    visit(ast.parse(source), "")
    return out


def equivalence(m: Mutant) -> str | None:
    """Why ``m`` is equivalent, when a person judged so (``None``: not judged)."""
    function, code = _where(m.file).get(m.line, ("<module>", ""))
    if not code:
        code = (_DIR[m.file] / m.file).read_text().splitlines()[m.line - 1]
        code = code.split("#")[0].strip()
    return EQUIVALENT.get((m.file, function, code, m.what))


@dataclass(frozen=True)
class Mutant:
    file: str
    index: int  # the index-th mutation point of the file, in walk order
    line: int
    what: str


def _skip_nodes(tree: ast.AST) -> set[int]:
    """Nodes never mutated: docstrings, annotations, asserts, ``__slots__``, and the
    state keys and reprs (they describe the state; the suite compares them only to each
    other)."""
    skip: set[int] = set()

    def mark(node: ast.AST) -> None:
        for sub in ast.walk(node):
            skip.add(id(sub))

    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            mark(node)
        elif isinstance(node, ast.AnnAssign | ast.arg) and node.annotation is not None:
            mark(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.returns is not None:
                mark(node.returns)
            if node.name in ("key", "state_key", "__repr__"):
                mark(node)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in ("__slots__", "__all__") for t in node.targets
        ):
            mark(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            mark(node)  # docstrings
    return skip


def _points(tree: ast.AST) -> Iterator[tuple[ast.AST, int, str]]:
    """(node, variant, description) of every mutation of the tree, in walk order."""
    skip = _skip_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _FLIP:
                    new = _FLIP[type(op)].__name__
                    yield node, i, f"{type(op).__name__} -> {new}"
        elif isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                yield node, 0, f"{v} -> {not v}"
            elif isinstance(v, int):
                yield node, 1, f"{v} -> {v + 1}"
                if v > 0:
                    yield node, -1, f"{v} -> {v - 1}"
        elif isinstance(node, ast.BoolOp):
            new = "Or" if isinstance(node.op, ast.And) else "And"
            yield node, 0, f"{type(node.op).__name__} -> {new}"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, 0, "drop not"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            new = "Sub" if isinstance(node.op, ast.Add) else "Add"
            yield node, 0, f"{type(node.op).__name__} -> {new}"


def mutants(file: str) -> list[Mutant]:
    tree = ast.parse((_DIR[file] / file).read_text())
    return [
        Mutant(file, i, getattr(node, "lineno", 0), what)
        for i, (node, _variant, what) in enumerate(_points(tree))
    ]


def mutated_source(m: Mutant) -> str:
    tree = ast.parse((_DIR[m.file] / m.file).read_text())
    for i, (node, variant, _what) in enumerate(_points(tree)):
        if i != m.index:
            continue
        if isinstance(node, ast.Compare):
            ops = list(node.ops)
            ops[variant] = _FLIP[type(ops[variant])]()
            node.ops = ops
        elif isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                node.value = not value
            elif isinstance(value, int):
                node.value = value + variant
        elif isinstance(node, ast.BoolOp):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp):
            # drop the ``not``: replace the operand in its parent
            _replace(tree, node, node.operand)
        elif isinstance(node, ast.BinOp):
            node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        break
    return ast.unparse(ast.fix_missing_locations(tree))


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return


def run_mutant(m: Mutant, workdir: Path, timeout: float) -> str:
    """'killed', 'timeout' or 'survived'.

    The mutated file is written into ``workdir``'s copy of the package and the killer
    suite runs in a forked child that imports the package afresh from there (this
    process never imports ``controller``), so no interpreter start-up per mutant.
    """
    target = workdir / "controller" / _DIR[m.file].name / m.file
    original = (_DIR[m.file] / m.file).read_text()
    target.write_text(mutated_source(m))
    try:
        pid = os.fork()
        if pid == 0:  # the child: run the suite, report by exit status
            code = 1
            try:
                # bounded in CPU time, not wall time: a loaded machine makes nothing time out
                resource.setrlimit(resource.RLIMIT_CPU, (int(timeout), int(timeout) + 5))
                sys.dont_write_bytecode = True
                sys.path.insert(0, str(workdir))
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os.dup2(devnull, 2)
                if m.file in TABLE_FILES:
                    code = _table_suite()
                else:
                    from tests.engine.mutation_suite import run

                    code = run()
            finally:
                os._exit(code)
        deadline = time.monotonic() + 30 * timeout  # a stuck child (sleeping) as a last resort
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "timeout"
            time.sleep(0.02)
    finally:
        target.write_text(original)
    code = os.waitstatus_to_exitcode(status)
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        return "timeout"
    return "survived" if code == 0 else "killed"


def _table_suite() -> int:
    """The pads' own tests, in this (forked) process: the mutated modules are imported
    first, from the work copy, so that the tests meet them."""
    import pytest

    import controller.table.claims
    import controller.table.controls  # noqa: F401

    args = ["-q", "-x", "-p", "no:cacheprovider", "--no-header"]
    return 0 if pytest.main([*args, *(str(ROOT / t) for t in TABLE_TESTS)]) == 0 else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=1800.0, help="seconds for the whole run")
    ap.add_argument("--timeout", type=float, default=60.0, help="CPU seconds per mutant")
    ap.add_argument(
        "--file",
        action="append",
        choices=FILES + TABLE_FILES,
        help="default: the engine's two files; claims.py and controls.py are the pads'",
    )
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument(
        "--at",
        action="append",
        metavar="FILE:LINE",
        help="only the mutants of that line (again after a test was added for a survivor)",
    )
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    ap.add_argument(
        "--self-check",
        action="store_true",
        help="run the suite once on the unchanged engine (it must pass) and stop",
    )
    args = ap.parse_args(argv)
    todo = [m for f in (args.file or FILES) for m in mutants(f)]
    if args.at:
        try:
            lines = {(f, int(n)) for f, n in (at.rsplit(":", 1) for at in args.at)}
        except ValueError:
            ap.error("--at takes FILE:LINE, e.g. hand.py:75")
        todo = [m for m in todo if (m.file, m.line) in lines]
    if args.list:
        for m in todo:
            print(f"{m.file}:{m.line}: {m.what}")
        print(f"mutants={len(todo)}")
        return 0
    random.Random(args.seed).shuffle(todo)
    ignore_cache = shutil.ignore_patterns("__pycache__")
    with tempfile.TemporaryDirectory(prefix="truco-mutation-") as tmp:
        work = Path(tmp)
        shutil.copytree(ROOT / "controller", work / "controller", ignore=ignore_cache)
        if args.self_check:
            first = (args.file or FILES)[0]
            unchanged = run_mutant(Mutant(first, -1, 0, "none"), work, args.timeout)
            print(f"unchanged engine: {'passes' if unchanged == 'survived' else unchanged}")
            return 0 if unchanged == "survived" else 1
        start = time.monotonic()
        results: list[tuple[Mutant, str]] = []
        for m in todo:
            if time.monotonic() - start > args.budget:
                break
            results.append((m, run_mutant(m, work, args.timeout)))
            if results[-1][1] == "survived":  # as found, to judge a long run while it goes
                print(
                    f"({len(results)}/{len(todo)}) {m.file}:{m.line}: {m.what}",
                    file=sys.stderr,
                    flush=True,
                )
        elapsed = time.monotonic() - start
    survived = [m for m, r in results if r == "survived"]
    equivalent = 0
    for m in sorted(survived, key=lambda m: (m.file, m.line)):
        why = equivalence(m)
        equivalent += why is not None
        said = f" (equivalent: {why})" if why is not None else ""
        print(f"survived {m.file}:{m.line}: {m.what}{said}")
    timeouts = sum(1 for _, r in results if r == "timeout")
    killed = len(results) - len(survived)
    score = killed / len(results) if results else 0.0
    real = len(results) - equivalent
    print(
        f"mutants={len(todo)} run={len(results)} killed={killed} (timeouts={timeouts}) "
        f"survived={len(survived)} equivalent={equivalent} score={score:.3f} "
        f"non_equivalent_score={killed / real if real else 0.0:.3f} seconds={elapsed:.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
