"""What a bar owner or a player reads is Spanish: the owner's and the players' commands
are run as they run them (their ``--help``, the installer's help and checks, a mock
enrolment, the doctor of a simulated table, a usage error), and their output must hold
no English. The detector is small and strict: English function words that Spanish never
uses ("the", "with", "is", ...), counted outside what is no prose (option names, their
choices and values, paths, commands, quoted text). The organiser's commands whose help
is Spanish (venue-broker, venue-night, desk-audit, league, organiser, desk) are run too;
the developers' commands (replay, render, ...) may stay English and are not run here."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cli import SPANISH_COMMANDS

ROOT = Path(__file__).resolve().parents[1]
TRUCO = [sys.executable, "-m", "controller.cli"]

#: function words of English that are no Spanish word
ENGLISH = frozenset(
    [
        "the",
        "and",
        "with",
        "of",
        "is",
        "are",
        "to",
        "from",
        "for",
        "this",
        "that",
        "these",
        "those",
        "your",
        "you",
        "it",
        "its",
        "be",
        "been",
        "will",
        "would",
        "can",
        "cannot",
        "could",
        "should",
        "must",
        "into",
        "then",
        "than",
        "when",
        "which",
        "while",
        "or",
        "not",
        "was",
        "were",
        "has",
        "have",
        "had",
        "there",
        "here",
        "please",
        "found",
        "missing",
        "failed",
        "unknown",
        "nothing",
        "every",
        "only",
        "each",
        "again",
    ]
)

#: what is no prose: options and what follows them in a usage line, {choices},
#: paths, `commands`, 'quoted' and "quoted" text, KEY=VALUE words, a program's name
_NOT_PROSE = re.compile(
    r"--?[\w-]+|\{[^}]*\}|\S*/\S*|`[^`]*`|'[^']*'|\"[^\"]*\"|\w+=\S*|\w+_\w+"
    r"|truco-table(?: \w+)?|install-pi"
)


def english_words(text: str) -> list[str]:
    prose = _NOT_PROSE.sub(" ", text)
    return [w for w in re.findall(r"[A-Za-z]+", prose) if w.lower() in ENGLISH]


def test_the_detector_finds_english_and_passes_spanish() -> None:
    assert english_words("the table's configuration (default /etc/truco-table/table.toml)")
    assert english_words("Reader connected on /dev/pts/3") == []  # no function word...
    assert english_words("Enrolling deck 'a' into decks.toml: 40 cards.") == ["into"]
    assert english_words("no table took 'undo' within 3 s: nothing done") == ["nothing"]
    spanish = "uso: truco-table run [-h] [--falta {to_win,malas_buenas}] la mesa con --mock"
    assert english_words(spanish) == []
    assert english_words("Poné los números de serie de tus Picos en /etc/x/pinmap.toml") == []


def run(
    argv: list[str], *, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**(os.environ if env is None else env), "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, input=stdin
    )


def available_commands() -> list[str]:
    from controller.cli import COMMANDS

    names = {c.name for c in COMMANDS}
    return sorted(SPANISH_COMMANDS & names)


@pytest.mark.parametrize("command", available_commands())
def test_the_help_of_the_owner_s_and_players_commands_is_spanish(command: str) -> None:
    done = run([*TRUCO, command, "--help"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"uso: truco-table {command}")
    assert english_words(done.stdout) == [], done.stdout


_ORGANISER = ["register", "title", "import", "withdraw", "seed", "start", "pair", "assign",
              "close-round", "walkover", "override", "status"]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "order"),
    [("league", o) for o in ("add-venue", "fixture", "desk")]
    + [("organiser", o) for o in _ORGANISER],
)
def test_the_help_of_the_league_s_and_the_organiser_s_orders_is_spanish(
    command: str, order: str
) -> None:
    done = run([*TRUCO, command, order, "--help"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"uso: truco-table {command} {order}")
    assert english_words(done.stdout) == [], done.stdout


def test_the_mock_table_s_help_is_spanish() -> None:
    """``sh scripts/mock --help`` is ``truco-table run --mock --help`` after the set-up."""
    text = (ROOT / "scripts" / "mock").read_text(encoding="utf-8")
    assert 'exec .venv/bin/truco-table run --mock "$@"' in text
    done = run([*TRUCO, "run", "--mock", "--help"])
    assert done.returncode == 0 and english_words(done.stdout) == [], done.stdout


def test_usage_errors_are_spanish() -> None:
    for argv in (["doctor", "--nope"], ["run", "--players", "3"], ["enroll", "--mock"],
                 ["control"], ["run", "--seed", "x"], ["venue-night"],
                 ["venue-night", "--venue", "x", "--http-port", "70000"],
                 ["venue-night", "--venue", "x", "--http-port", "y"], ["venue-broker"],
                 ["venue-broker", "--tournament", "c", "--tables", "2", "--port", "x",
                  "--out", "x"],
                 ["desk-audit"], ["desk-audit", "x", "--nope"], ["league"],
                 ["league", "fixture"], ["league", "desk", "--dir", "x", "--http-port", "y"],
                 ["league", "add-venue", "--dir", "x", "--venue", "v", "--tables", "2",
                  "--port", "x"], ["organiser"], ["organiser", "--desk", "nope", "status"],
                 ["organiser", "register"], ["organiser", "start", "--format", "liga"],
                 ["organiser", "override", "m1", "--winner", "a", "--reason", "r",
                  "--games", "x"], ["desk", "--refresh", "-1"], ["desk", "--reverify", "x"],
                 ["desk", "--http-port", "99999"], ["desk", "--duration", "x"]):  # fmt: skip
        done = run([*TRUCO, *argv])
        assert done.returncode == 2, (argv, done.stderr)
        assert "mirá truco-table" in done.stderr, done.stderr
        assert english_words(done.stderr) == [], done.stderr


def test_the_installer_s_help_and_checks_are_spanish(tmp_path: Path) -> None:
    done = run(["sh", "scripts/install-pi", "--help"])
    assert done.returncode == 0 and english_words(done.stdout) == [], done.stdout
    assert "docs/bares/armado.md" in done.stdout
    release = tmp_path / "os-release"
    release.write_text('ID=debian\nVERSION_CODENAME=trixie\nPRETTY_NAME="Debian 13"\n')
    checked = run(
        ["sh", "scripts/install-pi", "--check", "--not-a-pi"],
        env={**os.environ, "TRUCO_OS_RELEASE": str(release)},
    )
    said = checked.stdout + checked.stderr
    assert english_words(said) == [], said
    bad = tmp_path / "os-release-old"
    bad.write_text('ID=debian\nVERSION_CODENAME=bullseye\nPRETTY_NAME="Debian 11"\n')
    refused = run(
        ["sh", "scripts/install-pi", "--check", "--not-a-pi"],
        env={**os.environ, "TRUCO_OS_RELEASE": str(bad)},
    )
    assert refused.returncode == 3 and english_words(refused.stderr) == [], refused.stderr


def test_every_line_the_installer_prints_is_spanish() -> None:
    """The lines install-pi prints after its checks (steps, what it kept or wrote, the
    closing lines) are read from the script: each echo, say, die and refuse."""
    text = (ROOT / "scripts" / "install-pi").read_text(encoding="utf-8")
    said = re.findall(r'^\s*(?:say|die|refuse|echo|\|\| die|\|\| refuse)\s+"([^"]*)"', text, re.M)
    said += re.findall(r'^\s+"([^"]*)"\s*\\?$', text, re.M)  # continued lines
    assert len(said) > 30
    for line in said:
        assert english_words(line) == [], line
    assert "multiplex" not in text.split('reboot_needed" = yes')[-1].split("fi")[0]
    assert "hardware/README.md" not in text.split("8/8")[-1]
    assert "el Pi " not in text


def test_a_mock_enrolment_is_spanish(tmp_path: Path) -> None:
    done = run(
        [*TRUCO, "enroll", "--deck", "casa", "--mock", "--mock-pace", "0",
         "--registry", str(tmp_path / "decks.toml")],
        stdin="",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Quedó guardado el mazo 'casa' (40 cartas)" in done.stdout
    assert english_words(done.stdout + done.stderr) == [], done.stdout


@pytest.mark.skipif(not shutil.which("openssl"), reason="needs openssl (.ci/run installs it)")
def test_what_venue_broker_tells_the_organiser_is_spanish(tmp_path: Path) -> None:
    done = run([*TRUCO, "venue-broker", "--tournament", "copa", "--tables", "2",
                "--out", str(tmp_path / "salon")])  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("salón copa: 2 mesas, 1 mesa de control, 0 pantallas\n")
    assert "broker: mosquitto -c " in done.stdout
    assert english_words(done.stdout + done.stderr) == [], done.stdout


def test_the_doctor_of_a_simulated_table_is_spanish() -> None:
    done = run([*TRUCO, "doctor", "--mock", "--players", "2"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert english_words(done.stdout + done.stderr) == [], done.stdout


@pytest.mark.parametrize(
    "path",
    ["systemd/table.toml", "hardware/pinmap.toml", "hardware/pinmap-mux.toml",
     "hardware/pinmap-gpio.toml"],
)  # fmt: skip
def test_the_comments_the_owner_edits_are_spanish(path: str) -> None:
    """The files install-pi copies to /etc/truco-table, for the owner to edit."""
    text = (ROOT / path).read_text(encoding="utf-8")
    comments = [line.split("#", 1)[1] for line in text.splitlines() if "#" in line]
    assert len(comments) > 5
    for comment in comments:
        assert english_words(comment) == [], comment
    assert "el Pi " not in text and "the Pi" not in text


def test_the_pi_is_feminine_everywhere() -> None:
    """Rioplatense Spanish says "la Pi" (la Raspberry Pi): never "el Pi" in what the
    program, the installer, the configuration or the Spanish guides say."""
    pattern = re.compile(r"\b(?:[Ee]l|del|al|[Uu]n|este|ese) Pi\b")
    places = [
        *ROOT.glob("controller/**/*.py"),
        *ROOT.glob("docs/bares/*.md"),
        *ROOT.glob("docs/jugadores/*.md"),
        *ROOT.glob("docs/organizadores/*.md"),
        ROOT / "scripts" / "install-pi",
        *ROOT.glob("hardware/*.toml"),
        ROOT / "systemd" / "table.toml",
    ]
    wrong = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in places
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert wrong == []


GOOD_TOURNAMENT = 'name = "apertura"\ntable_id = "mesa01"\nbroker = "192.168.1.10:1883"\n'


@pytest.mark.parametrize(
    "extra",
    [
        "tournament = 3\n",  # the section is no table
        '[tournament]\nname = "apertura"\ncolor = "rojo"\n',
        '[tournament]\nname = 7\ntable_id = "mesa01"\nbroker = "x"\n',
        '[tournament]\nname = "a b"\ntable_id = "mesa01"\nbroker = "x"\n',
        '[tournament]\nname = "apertura"\ntable_id = "mesa 01"\nbroker = "x"\n',
        '[tournament]\nname = "apertura"\ntable_id = "mesa01"\nbroker = ":1883"\n',
        '[tournament]\nname = "apertura"\ntable_id = "mesa01"\nbroker = "host:puerto"\n',
        f'[tournament]\n{GOOD_TOURNAMENT}profile = "rapido"\n',
        f"[tournament]\n{GOOD_TOURNAMENT}keepalive_s = 0\n",
        f'[tournament]\n{GOOD_TOURNAMENT}password_file = "p"\n',
        f"[tournament]\n{GOOD_TOURNAMENT}username = 3\n",
        f'[tournament]\n{GOOD_TOURNAMENT}username = "mesa01"\npassword_file = "nada"\n',
        f'[tournament]\n{GOOD_TOURNAMENT}ca_file = "nada.crt"\n',
        f'[tournament]\n{GOOD_TOURNAMENT}match = "a b"\n',
        f'[tournament]\n{GOOD_TOURNAMENT}key_file = "falta.key"\n',
        f'[tournament]\n{GOOD_TOURNAMENT}key_file = "."\n',  # a folder
        f'[tournament]\n{GOOD_TOURNAMENT}key = "abab"\n',  # too short
    ],
)
def test_tournament_configuration_errors_are_spanish(extra: str, tmp_path: Path) -> None:
    """A bad ``[tournament]`` value in table.toml: the error names the file and the key,
    in Spanish."""
    from controller.tournament.table.link import load_tournament_settings

    path = tmp_path / "table.toml"
    path.write_text(extra, encoding="utf-8")
    with pytest.raises(ValueError) as error:
        load_tournament_settings(path)
    message = str(error.value)  # no strerror: the reason is ours, in Spanish
    assert str(tmp_path) in message  # table.toml, or the file it names that is wrong
    assert english_words(message) == [], message


def test_what_a_key_s_file_or_secret_says_is_spanish(tmp_path: Path) -> None:
    """The reader of small text files, the key loader and the tournament secret: a file
    missing, a folder, bytes that are not UTF-8, a key or a secret too short."""
    from controller.textfile import TextFileError, read_text_file
    from controller.tournament.wire.keys import derive_table_key
    from controller.tournament.wire.seal import KeyConfigError, load_key

    (tmp_path / "latin.key").write_bytes(b"n\xe9\n")
    (tmp_path / "short.key").write_text("abab\n")
    said = []
    for path in ("falta.key", ".", "latin.key"):
        with pytest.raises(TextFileError) as info:
            read_text_file(tmp_path / path, what="un archivo de clave")
        said.append(str(info.value))
    for path in ("falta.key", "short.key"):
        with pytest.raises(KeyConfigError) as key_info:
            load_key(tmp_path / path)
        said.append(str(key_info.value))
    with pytest.raises(KeyConfigError) as secret_info:
        derive_table_key(b"corto", "apertura", "mesa01")
    said.append(str(secret_info.value))
    missing = tmp_path / "falta.key"
    assert said[0] == f"no puedo leer {missing}: no existe: revisá el nombre y la carpeta"
    assert said[1].endswith("es una carpeta, no un archivo de clave: nombrá el archivo")
    assert said[2].endswith(
        "latin.key:1: no es texto UTF-8 (byte 0xe9): guardalo como UTF-8 desde el editor"
    )
    assert said[3].startswith(said[0])  # load_key: the same words
    assert "la clave es muy corta (2 bytes; hacen falta 16)" in said[4]
    assert "el secreto del torneo es muy corto (5 bytes" in said[5]
    for message in said:
        assert english_words(message) == [], message


def test_the_wiring_drawing_the_guide_shows_is_spanish() -> None:
    """docs/bares shows hardware/wiring.svg: its labels are the owner's."""
    import xml.etree.ElementTree as ET

    root = ET.parse(ROOT / "hardware" / "wiring.svg").getroot()
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert len(texts) > 50
    for text in texts:
        assert english_words(text) == [], text
    assert "wiring.svg" in (ROOT / "docs" / "bares" / "armado.md").read_text(encoding="utf-8")


def test_the_contact_sheet_s_captions_are_spanish() -> None:
    """``truco-table render --contact-sheet``: each screen under its caption."""
    from controller.cli.gallery import shots

    titles = [shot.title for shot in shots()]
    assert len(titles) > 50
    english = {title: english_words(title) for title in titles if english_words(title)}
    assert english == {}
    for title in titles:  # and none keeps an English word of the old captions
        assert not re.search(r"\b(answer|won|lost|turn|called|menu|seat|players?)\b", title)


@pytest.mark.parametrize(
    ("toml", "argv", "said"),
    [
        ("x = \n", [], "no es TOML válido"),
        ('[tournament]\ntables = "mesa01"\n', [], "va una lista de nombres de mesa"),
        ("[tournament]\nrules = 3\n", [], "van las reglas de la casa como texto"),
        ('[tournament]\nrules = "target"\n', [], "va como clave=valor"),
        ('[tournament]\nrules = "target=x"\n', [], "target tendría que ser 15 o 30"),
        ('[tournament]\nrules = "color=rojo"\n', [], "no es una regla de la casa"),
        ('[tournament]\ntables = ["mesa01"]\n', ["--competition"], "necesita el secreto"),
        ('[tournament]\ntables = ["mesa01"]\nkey = "00112233445566778899aabbccddeeff"\n',
         ["--competition", "--organiser-key-file", "falta.key"], "no puedo leer"),
        ("[tournament]\n", ["--http-port", "{busy}"], "ya está en uso"),
    ],
)  # fmt: skip
def test_what_the_desk_says_on_a_bad_start_is_spanish(
    toml: str, argv: list[str], said: str, tmp_path: Path
) -> None:
    """Issue 43: ``truco-table desk`` (and ``--competition``) refusing to start says why in
    Spanish: a configuration that is no TOML, a roster or rules of the wrong kind, a rule
    that does not exist, no secret for the competition, a key file it cannot read, a page
    port already taken."""
    import socket

    config = tmp_path / "desk.toml"
    config.write_text(toml, encoding="utf-8")
    config.chmod(0o600)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        args = [a.replace("{busy}", str(busy.getsockname()[1])) for a in argv]
        done = run([*TRUCO, "desk", "--config", str(config), "--out", str(tmp_path / "d"),
                    "--duration", "1", "--quiet", *args])  # fmt: skip
    assert done.returncode == 2, done
    assert said in done.stderr, done.stderr
    assert english_words(done.stderr) == [], done.stderr
    assert "Traceback" not in done.stderr


def test_the_demo_s_usage_errors_and_the_door_s_are_spanish(tmp_path: Path) -> None:
    missing = str(tmp_path / "falta.toml")
    for argv in (["tournament-demo", "--tables", "0"], ["tournament-demo", "--nope"],
                 ["venue-door"], ["venue-door", "--config", missing]):  # fmt: skip
        done = run([*TRUCO, *argv])
        assert done.returncode == 2, (argv, done.stderr)
        assert english_words(done.stderr) == [], done.stderr
