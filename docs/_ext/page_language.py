"""Each page's theme speaks the page's language.

The site is one Sphinx project (``language = "es"``), but it has pages in two languages:
the players', bar owners' and organisers' pages are Spanish, the developers' pages (and
the hardware and firmware documents) English. Sphinx's own words follow ``language``;
the theme (furo) has no Spanish catalog and writes many of its words in its templates
("Back to top", "On this page", "Toggle site navigation sidebar", "Made with"). So, once
the site is built, every page's frame (what is outside its ``<article>``: the page's own
text is never touched) is put in its language: the Spanish pages' frame in Spanish, the
English pages' frame in English, with ``<html lang>`` saying which.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx

#: the documents written in Spanish (their folders, or the document itself)
SPANISH = ("docs/index", "docs/jugadores/", "docs/bares/", "docs/organizadores/")

#: the theme's words, English to Spanish (as they stand in furo's HTML)
TO_SPANISH: tuple[tuple[str, str], ...] = (
    (">Back to top<", ">Volver arriba<"),
    ("<span>Next</span>", "<span>Siguiente</span>"),
    ("<span>Previous</span>", "<span>Anterior</span>"),
    ("Copyright &#169; ", "&#169; "),
    ("Toggle site navigation sidebar", "Mostrar u ocultar la navegación"),
    ("Toggle table of contents sidebar", "Mostrar u ocultar el índice de esta página"),
    ("Toggle Light / Dark / Auto color theme", "Cambiar el tema: claro, oscuro o automático"),
    ("Toggle navigation of ", "Mostrar u ocultar "),
    ("Skip to content", "Saltar al contenido"),
    ("<title>Contents</title>", "<title>Contenido</title>"),
    ("<title>Menu</title>", "<title>Menú</title>"),
    ("<title>Expand</title>", "<title>Desplegar</title>"),
    ("<title>Light mode</title>", "<title>Modo claro</title>"),
    ("<title>Dark mode</title>", "<title>Modo oscuro</title>"),
    ("Auto light/dark, in light mode", "Claro u oscuro según el sistema, ahora claro"),
    ("Auto light/dark, in dark mode", "Claro u oscuro según el sistema, ahora oscuro"),
)
#: words alone in a text node, with the template's spaces around them
_ON_THIS_PAGE = re.compile(r">(\s*)On this page(\s*)<")
_MADE_WITH = re.compile(
    r"Made with (<a [^>]*>Sphinx</a>) and (<a [^>]*>@pradyunsg</a>)'s\s*(<a [^>]*>Furo</a>)"
)

#: Sphinx's words (in Spanish, the project's language) back in English
TO_ENGLISH: tuple[tuple[str, str], ...] = (
    ('title="Índice"', 'title="Index"'),
    ('title="Búsqueda"', 'title="Search"'),
    ('placeholder="Búsqueda"', 'placeholder="Search"'),
    ('aria-label="Búsqueda"', 'aria-label="Search"'),
)

_ARTICLE = re.compile(r"(<article\b.*?</article>)", re.S)


def is_spanish(docname: str) -> bool:
    return any(docname == d or docname.startswith(d) for d in SPANISH)


def in_language(page: str, spanish: bool) -> str:
    """``page`` with its frame (not its article) in Spanish or in English."""
    parts = _ARTICLE.split(page)
    for index in range(0, len(parts), 2):  # the even parts are outside the article
        frame = parts[index]
        if spanish:
            for english, words in TO_SPANISH:
                frame = frame.replace(english, words)
            frame = _MADE_WITH.sub(r"Hecho con \1 y \3 (de \2)", frame)
            frame = _ON_THIS_PAGE.sub(r">\1En esta página\2<", frame)
        else:
            for words, english in TO_ENGLISH:
                frame = frame.replace(words, english)
            frame = frame.replace('<html class="no-js" lang="es"', '<html class="no-js" lang="en"')
        parts[index] = frame
    return "".join(parts)


def _rewrite(app: Sphinx, error: Exception | None) -> None:
    if error is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for docname in app.env.found_docs:
        path = out / f"{docname}.html"
        if path.is_file():
            page = path.read_text(encoding="utf-8")
            path.write_text(in_language(page, is_spanish(docname)), encoding="utf-8")


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("build-finished", _rewrite)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
