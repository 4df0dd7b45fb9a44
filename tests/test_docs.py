"""The manual is checked like code: the examples in the README, in every page of the
documentation site and in the docstrings run as written (doctest); every ``truco-table``
command the pages show is one the command's parser takes; the site builds with no
warning in strict mode (a broken link or anchor, a page in no table of contents, a
reference to a Python name that no longer exists); the README stays a short front door;
each audience's pages stand alone."""

from __future__ import annotations

import ast
import doctest
import functools
import importlib
import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from controller.cli import build_parser

ROOT = Path(__file__).parent.parent

MODULES = [
    "controller.engine.cards",
    "controller.engine.actions",
    "controller.engine.game",
    "controller.engine.bestplay",
    "controller.transcript",
]

#: Every Markdown page of the site (docs/conf.py's include_patterns), and the README.
PAGES = sorted(
    {
        *ROOT.glob("docs/**/*.md"),
        *ROOT.glob("hardware/*.md"),
        *ROOT.glob("firmware/*.md"),
        ROOT / "tests" / "scenarios" / "README.md",
        ROOT / "README.md",
    }
)
AUDIENCES = ("jugadores", "bares", "organizadores")


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=name)
def test_page_examples(page: Path) -> None:
    """Every ``>>>`` example of a page runs as written."""
    result = doctest.testfile(str(page), module_relative=False, verbose=False)
    assert result.failed == 0


def test_engine_page_examples_are_there() -> None:
    """The engine's worked example (once the README's) is still a doctest."""
    page = ROOT / "docs" / "dev" / "engine.md"
    result = doctest.testfile(str(page), module_relative=False, verbose=False)
    assert result.attempted >= 5
    assert result.failed == 0


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"^ *```(?:sh|console|bash)\n(.*?)^ *```", text, re.S | re.M)


def commands(text: str) -> list[str]:
    """The ``truco-table ...`` command lines of a page's shell blocks, continuation
    lines joined, prompts and the ``.venv/bin/`` or install prefix dropped."""
    found = []
    for block in shell_blocks(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            line = re.sub(r"^(sudo (-u \w+ )?)", "", line)
            line = re.sub(r"^(\S*/)?(?=truco-table )", "", line)
            if line.startswith("truco-table "):
                found.append(line)
    return found


def argv_of(line: str) -> list[str]:
    line = re.sub(r"<[^<>]*>", "PLACEHOLDER", line)  # <the project's git address>
    line = re.sub(r"\[(--[^\[\]]*)\]", r"\1", line)  # [--http-port 8090]: an option shown
    line = line.split(" | ")[0]
    return shlex.split(line, comments=True)[1:]


EXAMPLES = [(page, line) for page in PAGES for line in commands(page.read_text("utf-8"))]


def test_the_pages_show_commands() -> None:
    assert len(EXAMPLES) >= 40
    assert {page.parent.name for page, _ in EXAMPLES} >= {"dev", "bares", "organizadores"}


@pytest.mark.parametrize(
    ("page", "line"), EXAMPLES, ids=[f"{name(p)}:{line[:50]}" for p, line in EXAMPLES]
)
def test_command_examples_parse(page: Path, line: str) -> None:
    """A command a page shows is one the real parser takes: its subcommand and every
    option exist and their values are of the right kind."""
    parser = build_parser()
    try:
        parser.parse_args(argv_of(line))
    except SystemExit as exit:
        pytest.fail(f"{name(page)}: {line!r} is refused by truco-table (exit {exit.code})")


def test_script_examples_exist() -> None:
    """Every ``sh scripts/X`` a page shows is a script of the repository."""
    for page in PAGES:
        for block in shell_blocks(page.read_text("utf-8")):
            for script in re.findall(r"\bsh (scripts/[\w.-]+)", block):
                assert (ROOT / script).is_file(), f"{name(page)}: no {script}"


def links(text: str) -> list[str]:
    return [m for m in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"\w+:", m)]


def test_readme_is_a_front_door() -> None:
    """At most about 150 lines; the two commands exactly as the scripts are; a picture of
    the table and of the seat screens; a link to each audience's pages; no dead link."""
    text = (ROOT / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= 150
    block = shell_blocks(text)[0].splitlines()
    assert [line.split("#")[0].strip() for line in block] == ["sh scripts/mock", "sh scripts/test"]
    assert "truco-table run --mock" in (ROOT / "scripts" / "mock").read_text("utf-8")
    assert ".venv/bin/pytest" in (ROOT / "scripts" / "test").read_text("utf-8")
    targets = links(text)
    for target in targets:
        assert (ROOT / target.partition("#")[0]).exists(), f"README links to {target}"
    for audience in (*AUDIENCES, "dev"):
        assert f"docs/{audience}/index.md" in targets
    assert "hardware/wiring.svg" in targets and "docs/contact-sheet.png" in targets


@pytest.mark.parametrize("audience", AUDIENCES)
def test_audience_pages_stand_alone(audience: str) -> None:
    """A player's, bar owner's or organiser's page never sends them to the developers'
    pages (nor to the English documents) to finish what they came to do."""
    english = {"docs/dev", "firmware/", "hardware/README.md", "docs/RULES.md", "README.md"}
    for page in sorted((ROOT / "docs" / audience).glob("*.md")):
        for target in links(page.read_text("utf-8")):
            resolved = (page.parent / target.partition("#")[0]).resolve()
            where = str(resolved.relative_to(ROOT))
            assert not any(where.startswith(e) for e in english), f"{name(page)} -> {where}"


def sphinx(source: Path, out: Path) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("sphinx") is None:
        pytest.fail("Sphinx is not installed: sh scripts/bootstrap installs the docs extra")
    command = [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-E"]
    command += ["-b", "html", "-c", str(source / "docs"), str(source), str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """What ``sh scripts/docs --check`` and CI build: no warning at all."""
    result = sphinx(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    for page in ("docs/index", "docs/jugadores/index", "docs/dev/api", "hardware/README"):
        assert (tmp_path / "site" / f"{page}.html").is_file()
    api = (tmp_path / "site" / "docs" / "dev" / "api.html").read_text("utf-8")
    assert "controller.engine.Game.push" in api  # generated from the docstrings
    architecture = (tmp_path / "site" / "docs" / "dev" / "architecture.html").read_text("utf-8")
    # the parts import one way (tests/test_layers.py): no two import each other
    assert "engine" in architecture and "through controller." not in architecture
    # each page's frame (the theme's words) speaks the page's language
    theme_english = ("Back to top", "On this page", "Toggle site navigation", "Made with",
                     "Skip to content", "<span>Next</span>", "<span>Previous</span>")  # fmt: skip
    for page in ("docs/index", "docs/bares/armado", "docs/jugadores/index",
                 "docs/organizadores/index"):  # fmt: skip
        html = (tmp_path / "site" / f"{page}.html").read_text("utf-8")
        assert '<html class="no-js" lang="es"' in html, page
        frame = re.sub(r"<article\b.*?</article>", "", html, flags=re.S)
        assert [w for w in theme_english if w in frame] == [], page
        assert "Volver arriba" in frame and "Saltar al contenido" in frame, page
    assert '<html class="no-js" lang="en"' in architecture
    assert "Back to top" in architecture and 'placeholder="Search"' in architecture


@pytest.mark.parametrize(
    ("page", "complaint"),
    [
        ("[the rules](nowhere.md)", "nowhere.md"),
        ("[the rules](index.md#no-such-heading)", "no-such-heading"),
        ("{py:class}`controller.engine.NoSuchThing`", "controller.engine.NoSuchThing"),
    ],
)
def test_a_broken_reference_fails_the_build(tmp_path: Path, page: str, complaint: str) -> None:
    """The strictness itself: the site's own configuration on a one-page site with one
    broken link, anchor or Python name."""
    docs = tmp_path / "src" / "docs"
    shutil.copytree(ROOT / "docs" / "_ext", docs / "_ext")
    shutil.copytree(ROOT / "docs" / "_root", docs / "_root")
    shutil.copy(ROOT / "docs" / "conf.py", docs / "conf.py")
    (docs / "index.md").write_text(f"# Index\n\n{page}\n", encoding="utf-8")
    result = sphinx(tmp_path / "src", tmp_path / "site")
    assert result.returncode != 0
    assert complaint in result.stderr


def load_layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layers", ROOT / "docs" / "_ext" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_layers_are_read_from_the_code(tmp_path: Path) -> None:
    """The architecture page's table: the real tree has one-way layers with the engine at
    the bottom; a made-up tree with a cycle and an engine that opens files is caught."""
    layers = load_layers()
    real = layers.Structure(ROOT)
    assert real.edges["engine"] == set()
    assert real.module_cycle() is None
    assert real.depth()["engine"] == 0
    assert real.depth()["cli"] == max(real.depth().values())
    tree = tmp_path / "controller"
    (tree / "engine").mkdir(parents=True)
    (tree / "table").mkdir()
    for package in (tree, tree / "engine", tree / "table"):
        (package / "__init__.py").write_text("", encoding="utf-8")
    (tree / "engine" / "game.py").write_text("import os\nfrom ..table import a\n", "utf-8")
    (tree / "table" / "a.py").write_text("from ..engine import game\n", encoding="utf-8")
    made_up = layers.Structure(tmp_path)
    assert made_up.edges["engine"] == {"table"}
    assert "os" in made_up.engine_imports
    assert made_up.module_cycle() == [
        "controller.engine.game",
        "controller.table.a",
        "controller.engine.game",
    ]


def docstrings(source: str) -> list[tuple[str, str, int]]:
    """(name, docstring, line) of the module and of every class and function in it."""
    tree = ast.parse(source)
    found: list[tuple[str, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text and node.body:
                found.append((getattr(node, "name", "<module>"), text, node.body[0].lineno))
    return found


@pytest.mark.parametrize("name", MODULES)
def test_module_examples(name: str) -> None:
    """The examples are read from the module's source and run in the namespace of the
    module as imported: on the compiled build (``tests/test_build.py``) they run against
    the compiled module, whose functions doctest cannot look into."""
    module = importlib.import_module(name)
    source = Path(name.replace(".", "/") + ".py")
    path = ROOT / source
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(verbose=False)
    for where, text, line in docstrings(path.read_text(encoding="utf-8")):
        test = parser.get_doctest(text, dict(vars(module)), f"{name}.{where}", str(path), line)
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0


def test_the_documents_the_program_names_exist() -> None:
    """A message or comment that sends the reader to a document (``docs/bares/armado.md,
    paso 1``) names one that exists, also after the README's sections moved."""
    pattern = re.compile(r"\b((?:docs|hardware|firmware)/[\w/.-]+\.md)\b")
    sources = [*ROOT.glob("controller/**/*.py"), *ROOT.glob("scripts/*"), *ROOT.glob("bench/*.py")]
    for source in sources:
        for path in pattern.findall(source.read_text("utf-8")):
            assert (ROOT / path).is_file(), f"{name(source)} names {path}"


def table_rows(text: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} "))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def load_firmware_config() -> ModuleType:
    path = ROOT / "firmware" / "seatnode" / "config.py"
    spec = importlib.util.spec_from_file_location("seatnode_config", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_spanish_guide_wires_what_the_firmware_reads() -> None:
    """La guía de armado's pin tables are the seat node's pins (firmware/seatnode/config.py,
    what the node reads), and its prices are the parts list's (hardware/bom.md)."""
    guide = (ROOT / "docs" / "bares" / "armado.md").read_text("utf-8")
    config = load_firmware_config()
    reader = {row[0]: row[1] for row in table_rows(guide, "pin del lector")}
    assert reader["SDA"] == f"GP{config.PIN_CS}"
    assert reader["SCK"] == f"GP{config.PIN_SCK}"
    assert reader["MOSI"] == f"GP{config.PIN_MOSI}"
    assert reader["MISO"] == f"GP{config.PIN_MISO}"
    assert reader["RST"] == f"GP{config.PIN_RST}"
    buttons = {row[0]: row[1] for row in table_rows(guide, "botón")}
    for button, pin in config.BUTTON_PINS:
        assert buttons[button.replace("_", " ")] == f"GP{pin}"
    # the 2.42" module on its 4-wire SPI, on the pins the node drives it from
    assert config.PANEL_BUSES["ssd1309"] == "spi"
    panel = {row[0]: row[1] for row in table_rows(guide, "pin de la pantallita")}
    assert f"GP{config.PIN_PANEL_SCK} " in panel["SCL"]
    assert f"GP{config.PIN_PANEL_MOSI} " in panel["SDA"]
    assert f"GP{config.PIN_PANEL_DC} " in panel["DC"] and f"GP{config.PIN_PANEL_CS} " in panel["CS"]
    assert f"GP{config.PIN_PANEL_RES} " in panel["RES"]
    # a 4-pin I2C module's two wires
    assert f"SCL a GP{config.PIN_SCL} " in guide and f"SDA a GP{config.PIN_SDA} " in guide
    assert f"GP{config.PIN_LED_PANEL} " in guide
    bom = (ROOT / "hardware" / "bom.md").read_text("utf-8")
    totals = re.search(
        r"\| \*\*total\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \| \*\*(\d+)\*\* \|", bom
    )
    assert totals is not None
    for page in ("armado.md", "index.md"):
        text = (ROOT / "docs" / "bares" / page).read_text("utf-8")
        assert all(total in text for total in totals.groups()), page
    main_steps = guide.split("\n## Otras formas de armarla\n")[0]
    assert not any(word in main_steps for word in ("TCA9548A", "multiplexor", "mux_channel"))


@functools.cache
def program_words() -> str:
    """Every string the program can show (its string constants and the fixed parts of its
    f-strings; the seat node's too), upper-cased: what a panel, the doctor, the desk's
    page or a node's terminal can say."""
    found: list[str] = []
    sources = [*ROOT.glob("controller/**/*.py"), *ROOT.glob("firmware/**/*.py")]
    for source in sorted(sources):
        for node in ast.walk(ast.parse(source.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
    return "\n".join(found).upper()


@functools.cache
def panel_texts() -> str:
    """Every text of every kind of seat screen, as the table draws it (the gallery the
    contact sheet is made of), digits made ``#``."""
    from controller.cli.gallery import shots
    from controller.render.screen import screen_texts

    texts = {text for shot in shots() for text in screen_texts(shot.screen)}
    return re.sub(r"\d+", "#", "\n".join(texts))


def quoted(text: str) -> tuple[list[str], list[str]]:
    """(the panel texts in capitals a page quotes in ``code``, the phrases it quotes in
    *italics*), code blocks left out; names of things (``RPI_PICO``, ``RPI-RP2``, an
    option) are no panel text."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    code = [
        t
        for t in re.findall(r"`([^`\n]+)`", text)
        if t == t.upper() and re.search(r"[A-ZÁÉÍÓÚÑ]{3}", t) and not re.search(r"^-|_|\w-\w", t)
    ]
    italics = re.findall(r"(?<![*\w])\*([^*\n]+)\*(?![*\w])", text)
    return code, italics


@pytest.mark.parametrize("audience", AUDIENCES)
def test_the_pages_use_the_words_on_the_screens(audience: str) -> None:
    """What a Spanish page quotes from a panel, the doctor or the desk's page is what the
    program says: a panel text in capitals is one the screens draw (or made of the words
    they use), a phrase in italics is one of the program's own strings."""
    words = program_words()
    panels = panel_texts()
    for page in sorted((ROOT / "docs" / audience).glob("*.md")):
        code, italics = quoted(page.read_text("utf-8"))
        for text in code:
            if re.sub(r"\d+", "#", text) in panels:
                continue
            for word in re.findall(r"[A-ZÁÉÍÓÚÑ]{2,}", text):
                assert word in words, f"{name(page)}: {text!r} ({word} is on no screen)"
        for phrase in italics:
            for piece in re.split(r"\bN\b|\d+|\.\.\.|…", phrase):
                piece = piece.strip(" .:").upper()
                assert not piece or piece in words, f"{name(page)}: *{phrase}* is not the program's"


#: The subcommands whose examples run as written: they only read the repository's files
#: (a render's picture goes to a temporary folder instead of where the page writes it).
RUNNABLE = ("replay", "render")


def runnable_examples() -> list[tuple[Path, str]]:
    found = []
    for page, line in EXAMPLES:
        argv = argv_of(line)
        files = [a for a in argv if "/" in a and not a.startswith("-") and not a.endswith(".png")]
        placeholder = any(re.fullmatch(r"[A-Z][A-Z_:]+", a) for a in argv)  # FILE, DIR
        if argv[0] in RUNNABLE and not placeholder and all((ROOT / f).is_file() for f in files):
            found.append((page, line))
    return found


@pytest.mark.parametrize(
    ("page", "line"),
    runnable_examples(),
    ids=[f"{name(p)}:{line[:50]}" for p, line in runnable_examples()],
)
def test_command_examples_run(tmp_path: Path, page: Path, line: str) -> None:
    """A command that only reads the repository runs as the page shows it, and says what
    the page's comment says it says (``# {"score": [16, 10], ...}``)."""
    argv = argv_of(line)
    if "--out" in argv:
        argv[argv.index("--out") + 1] = str(tmp_path / "screen.png")
    result = subprocess.run(
        [sys.executable, "-m", "controller.cli", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{name(page)}: {line!r}: {result.stderr}"
    said = line.partition(" # ")[2]
    for key, value in re.findall(r'"(\w+)": (\[[^\]]*\]|\w+)', said):
        assert f'"{key}": {value}' in result.stdout, f"{name(page)}: {line!r}"
    if "--out" in argv:
        assert (tmp_path / "screen.png").stat().st_size > 0


def test_some_examples_run() -> None:
    assert len(runnable_examples()) >= 5
