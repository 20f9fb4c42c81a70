"""The glossary as content data: one YAML file checked by the lessons' validator (problems on
their lines), /glossary/ listing every term under its own anchor, the first use of a term on a
question page marked with its one-line definition, definitions sanitised like lesson Markdown,
and the lab's prediction fields defining their words before they ask."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command

from lessons.glossary import check_glossary, glossary_path, load_glossary
from tests.lessons.lessonfiles import FIXTURES, line_of, write

TERM = """\
  - slug: {slug}
    term: {term}
    words: [{words}]
    short: {short}
    long: |
      {long}
    in_the_lab: |
      The run page.
"""
TWO_TERMS = [
    (
        "visibility-timeout",
        "visibility timeout",
        "How long a message may stay unacknowledged before Redis hands it out again.",
        "Longer text about the **timeout**.",
    ),
    ("countdown", "countdown", "Seconds before a task may run.", "The worker holds it meanwhile."),
]
SOUND = "terms:\n" + "".join(
    TERM.format(slug=slug, term=term, words=term, short=short, long=long)
    for slug, term, short, long in TWO_TERMS
)
# The terms the issue names, by slug in lessons/glossary.yaml.
REQUIRED = [
    "kombu", "broker", "visibility-timeout", "unacked-hash", "restore-sweep", "eta-countdown",
    "prefetch", "acks-late", "receipt", "quorum-queue", "idempotent",
]  # fmt: skip


@pytest.fixture
def fixture_site(settings, tmp_path):
    """The fixture lessons with a two-term glossary; returns the glossary's path."""
    settings.LESSONS_DIR = FIXTURES
    settings.GLOSSARY_FILE = write(tmp_path, "glossary.yaml", SOUND)
    return settings.GLOSSARY_FILE


def test_a_broken_glossary_is_reported_on_the_lines_to_fix(tmp_path):
    text = SOUND.replace("short: Seconds before a task may run.", "short: [not, text]") + (
        "  - slug: ghost\n    term: ghost\n    words: [ghost]\n    short: x\n    long: x\n"
        "    bogus: 1\n"
    )
    path = write(tmp_path, "glossary.yaml", text)

    problems = [(p.line, p.message) for p in check_glossary(path, set()).problems]

    assert problems == [
        (line_of(text, "short: [not, text]"), "terms[1].short: expected text, found a list"),
        (line_of(text, "- slug: ghost"), "terms[2]: missing field 'in_the_lab'"),
        (
            line_of(text, "bogus: 1"),
            "terms[2]: unknown field 'bogus' (expected one of: slug, term, words, code, short, "
            "long, in_the_lab)",
        ),
    ]


def test_two_terms_claiming_a_slug_or_a_word_and_dead_links_are_refused_on_their_lines(tmp_path):
    text = SOUND.replace("  - slug: countdown\n", "  - slug: visibility-timeout\n").replace(
        "words: [countdown]", "words: [Visibility timeout]"
    ) + TERM.format(
        slug="ghost", term="ghost", words="ghost", short="See [x](/q/no-such-question/).", long="x"
    )
    path = write(tmp_path, "glossary.yaml", text)

    problems = [(p.line, p.message) for p in check_glossary(path, {"fixture-countdown"}).problems]

    assert problems == [
        (
            line_of(text, "- slug: visibility-timeout", 3),
            "terms[1].slug: duplicate slug 'visibility-timeout' (first on line 2)",
        ),
        (
            line_of(text, "words: [Visibility timeout]"),
            "terms[1].words[0]: 'Visibility timeout' is already a spelling of 'visibility-timeout'",
        ),
        (
            line_of(text, "no-such-question"),
            "terms[2].short: links to question 'no-such-question', which no lesson file declares",
        ),
    ]


def test_where_the_lab_shows_a_term_must_link_an_experiment_that_exists(tmp_path):
    text = SOUND.replace(
        "      The run page.\n",
        "      See [it](/lab/experiments/no-such-experiment/) and\n"
        "      [this one](/lab/experiments/countdown-beyond-timeout/).\n",
        1,
    )
    path = write(tmp_path, "glossary.yaml", text)

    problems = [(p.line, p.message) for p in check_glossary(path, set()).problems]

    assert problems == [
        (
            line_of(text, "no-such-experiment"),
            "terms[0].in_the_lab: links to lab experiment 'no-such-experiment', which does not exist",
        )
    ]


def test_a_two_line_short_definition_is_refused_and_validatelessons_prints_it(settings, tmp_path):
    text = SOUND.replace(
        "short: Seconds before a task may run.", "short: |\n      Seconds before\n      it runs."
    )
    settings.LESSONS_DIR = FIXTURES
    settings.GLOSSARY_FILE = write(tmp_path, "glossary.yaml", text)
    out = StringIO()

    with pytest.raises(SystemExit) as exit_info:
        call_command("validatelessons", stdout=out)

    assert exit_info.value.code == 1
    line = line_of(text, "short: |")
    assert (
        f"{settings.GLOSSARY_FILE}:{line}: terms[1].short: must be one line (it is shown in "
        "place); put the rest in long"
    ) in out.getvalue()


def test_the_real_glossary_is_sound_and_has_the_terms_the_lessons_need():
    loaded = load_glossary()
    assert loaded.problems == [], glossary_path()
    assert set(REQUIRED) <= {t.slug for t in loaded.terms}
    for term in loaded.terms:
        assert term.short and term.long and term.in_the_lab, term.slug


@pytest.mark.django_db
def test_glossary_page_lists_every_term_under_its_own_anchor(client):
    html = client.get("/glossary/").content.decode()
    for term in load_glossary().terms:
        assert f'<section class="glossary-term" id="{term.slug}"' in html
        assert f'<a href="#{term.slug}">{term.term}</a>' in html
        assert f"<dfn>{term.term}</dfn>" in html
    assert 'href="/glossary/"' in client.get("/").content.decode()  # in the site's navigation


def section_html(html: str, ident: str) -> str:
    return re.search(rf'<section class="[^"]*" id="{ident}".*?</section>', html, re.S).group(0)


@pytest.mark.django_db
def test_a_question_page_marks_only_the_first_use_of_each_term(client, fixture_site):
    html = client.get("/q/fixture-countdown/senior/").content.decode()

    # "visibility timeout" is first used in the solid tier, again in a key point: one mark.
    assert html.count('popovertarget="term-visibility-timeout"') == 1
    solid = section_html(html, "tier-solid")
    assert re.search(
        r'the\s+<button type="button" class="term" popovertarget="term-visibility-timeout">'
        r"visibility timeout</button>",
        solid,
    )
    assert 'id="term-visibility-timeout" popover>' in solid
    assert "How long a message may stay unacknowledged" in solid
    assert '<a href="/glossary/#visibility-timeout">More about visibility timeout</a>' in solid
    key_points = html[html.index('id="key-points-heading"') :]
    assert "visibility timeout passes" in key_points and "term-visibility-timeout" not in key_points
    assert html.count('popovertarget="term-countdown"') == 1
    # The prompt's `apply_async(countdown=3600)` is code: the word inside it is not marked.
    prompt = html[html.index('id="prompt-heading"') : html.index('id="answers-heading"')]
    assert "<code>apply_async(countdown=3600)</code>" in prompt
    assert html.count('class="term"') == 2

    # A tier opened through htmx carries the same single mark.
    partial = client.get("/q/fixture-countdown/solid/", headers={"HX-Request": "true"})
    assert partial.content.decode().count('popovertarget="term-visibility-timeout"') == 1


@pytest.mark.django_db
def test_definitions_are_sanitised_like_lesson_markdown(client, fixture_site):
    fixture_site.write_text(
        SOUND.replace(
            "short: How long a message may stay unacknowledged before Redis hands it out again.",
            "short: 'Long <script>alert(1)</script> [x](javascript:alert(2)) <b onclick=\"y()\">b</b>'",
        ).replace("Longer text about the **timeout**.", '<img src=x onerror="alert(3)"> **bold**')
    )
    for url in ("/glossary/", "/q/fixture-countdown/senior/"):
        html = client.get(url).content.decode()
        assert "Long" in html
        for bad in ("<script>alert", "javascript:", "onclick", "onerror", "<img"):
            assert bad not in html, (url, bad)
    assert "<strong>bold</strong>" in client.get("/glossary/").content.decode()


@pytest.mark.django_db
def test_the_lab_form_defines_receipts_before_asking_for_them(client):
    html = client.get("/lab/").content.decode()
    definition = html.index("<dfn>receipt</dfn>")
    assert definition < html.index('<label for="id_prediction">Your prediction: how many receipts?')
    assert '<a href="/glossary/#receipt">' in html[definition:]


@pytest.mark.django_db
def test_an_experiment_prediction_defines_its_unit_before_asking(client):
    html = client.get("/lab/experiments/countdown-beyond-timeout/").content.decode()
    assert html.index("<dfn>receipt</dfn>") < html.index('<label for="prediction">')


@pytest.mark.browser
@pytest.mark.parametrize("screen", ["laptop", "phone"])
def test_a_marked_term_opens_its_definition_in_place_by_tap_or_click(
    browser, live_server_url, screen
):
    from playwright.sync_api import expect

    from tests.conftest import ARTIFACTS
    from tests.lessons.test_accessibility import serious_violations
    from tests.lessons.test_course_browser import SCREENS

    context = browser.new_context(**SCREENS[screen])
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{live_server_url}/q/why-task-ran-twice/senior/")
        term = page.locator("button.term").first
        name = term.get_attribute("popovertarget")
        popover = page.locator(f"#{name}")
        expect(popover).to_be_hidden()
        term.scroll_into_view_if_needed()
        term.tap() if screen == "phone" else term.click()
        expect(popover).to_be_visible()
        expect(popover.get_by_role("link", name=re.compile("^More about"))).to_be_visible()
        box, under = popover.bounding_box(), term.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= SCREENS[screen]["viewport"]["width"]
        if screen == "laptop":  # placed just under its button
            assert 0 <= box["y"] - (under["y"] + under["height"]) < 20
        assert serious_violations(page) == [], "question page, a definition open"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"glossary-term-{screen}.png"))
        page.keyboard.press("Escape")
        expect(popover).to_be_hidden()

        page.goto(f"{live_server_url}/lab/")
        defined = page.locator(".field-prediction").locator("xpath=preceding-sibling::dl[1]")
        expect(defined).to_contain_text("receipt")
        expect(defined).to_be_visible()
        defined.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"glossary-lab-form-{screen}.png"))
        page.goto(f"{live_server_url}/glossary/#restore-sweep")
        expect(page.locator("#restore-sweep")).to_be_in_viewport()
        assert serious_violations(page) == [], "glossary page"
        page.screenshot(path=str(ARTIFACTS / f"glossary-page-{screen}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]
    finally:
        context.close()
    assert errors == []
