"""Markdown and code to safe HTML, on the server: lesson prose is data, so it is sanitised
like any other input, and code is highlighted by Pygments so pages need no JavaScript for it."""

import re
from functools import lru_cache

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name

CODE_CSS_CLASS = "highlight"
# Pygments has no Redis lexer; redis-cli sessions read fine as plain text.
LEXER_ALIASES = {"redis": "text"}

ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "kbd", "span", "div", "blockquote",
    "ul", "ol", "li", "a", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "pre": {"class"},
    "th": {"align"},
    "td": {"align"},
}
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_WORD = re.compile(r"\w")
# The page owns h1/h2; headings written inside a lesson start at h3 so the outline stays sound.
_TOP_HEADING = re.compile(r"<(/?)h[12]\b")
# Wide tables and code scroll sideways on a phone; a scroll box must take keyboard focus
# (axe: scrollable-region-focusable), so both get tabindex after sanitising.
_SCROLL_BOX = re.compile(r"<(pre|table)>")


# On a phone a wide table's far columns start off-screen; lessons.css shows this hint there
# and keeps the first (key) column in view while the rest scrolls (issue 29).
TABLE_HINT = (
    '<p class="table-hint" aria-hidden="true">Wide table: swipe sideways for every column.</p>'
)


def _focusable_scroll_boxes(html: str) -> str:
    html = html.replace("<table>", TABLE_HINT + "<table>")
    return _SCROLL_BOX.sub(r'<\1 tabindex="0">', html)


def count_words(text: str) -> int:
    """Words a speaker would say: fenced code left out, and bare Markdown punctuation
    (table pipes, `---`, list dashes) is not a word."""
    prose = _FENCE.sub(" ", text or "")
    return sum(1 for token in prose.split() if _WORD.search(token))


# "measurement note 4" in prose opens the note's page; one already in a link stays as it is.
_NOTE_MENTION = re.compile(r"(?<!\[)\bmeasurement note (\d+)\b(?!\]\()")


def _note_links(prose: str) -> str:
    return _NOTE_MENTION.sub(r"[measurement note \1](/evidence/notes/\1/)", prose)


def link_note_mentions(text: str) -> str:
    """Each plain "measurement note N" outside fenced code as a Markdown link to its page (the
    validator refuses an N the notes do not have, lessons/question_links.py)."""
    out, last = [], 0
    for fence in _FENCE.finditer(text):
        out += [_note_links(text[last : fence.start()]), fence.group(0)]
        last = fence.end()
    return "".join([*out, _note_links(text[last:])])


@lru_cache(maxsize=2048)
def render_markdown(text: str) -> SafeString:
    """Markdown (tables, fenced and highlighted code) to sanitised HTML."""
    html = markdown.markdown(
        link_note_mentions(text or ""),
        extensions=["tables", "fenced_code", "codehilite", "sane_lists"],
        extension_configs={
            "tables": {"use_align_attribute": True},
            "codehilite": {"css_class": CODE_CSS_CLASS, "guess_lang": False},
        },
        output_format="html",
    )
    html = _TOP_HEADING.sub(r"<\1h3", html)
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        link_rel="noopener noreferrer",
        url_schemes={"http", "https", "mailto"},
    )
    return mark_safe(_focusable_scroll_boxes(clean))  # noqa: S308 - nh3 has just sanitised it


def render_inline_markdown(text: str) -> SafeString:
    """One line of Markdown (`code`, *emphasis*) as HTML that fits inside a sentence or a
    <legend>: the paragraph render_markdown wraps it in is dropped."""
    html = str(render_markdown(text or "")).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return mark_safe(html)  # noqa: S308 - render_markdown has sanitised it with nh3


def has_table(text: str) -> bool:
    return "<table" in render_markdown(text)


def lexer_for(language: str):
    try:
        return get_lexer_by_name(LEXER_ALIASES.get(language, language))
    except Exception:  # pygments.util.ClassNotFound; the validator reports bad languages
        return TextLexer()


@lru_cache(maxsize=512)
def highlight_code(code: str, language: str) -> SafeString:
    """Highlighted HTML for a code sample; Pygments escapes the source itself."""
    html = highlight(code, lexer_for(language), HtmlFormatter(cssclass=CODE_CSS_CLASS))
    return mark_safe(_focusable_scroll_boxes(html))  # noqa: S308 - Pygments escapes the source


def highlight_lines(code: str, language: str, *, first_line: int, marked: tuple[int, ...]):
    """Highlighted code numbered from `first_line` (its line in the file), `marked` lines
    (1-based within `code`) picked out; Pygments escapes the source itself."""
    formatter = HtmlFormatter(
        cssclass=CODE_CSS_CLASS, linenos="inline", linenostart=first_line, hl_lines=list(marked)
    )
    html = highlight(code, lexer_for(language), formatter)
    return mark_safe(_focusable_scroll_boxes(html))  # noqa: S308 - Pygments escapes the source


def pygments_css(style: str = "default") -> str:
    return HtmlFormatter(style=style).get_style_defs(f".{CODE_CSS_CLASS}")
