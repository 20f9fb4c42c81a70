"""Template filters for lesson text: `{% load lesson_tags %}`, then `{{ text|markdown }}` or
`{{ code|highlight:"python" }}`. Other apps (quiz, lab) use them to show claims and samples."""

from django import template

from lessons.rendering import highlight_code, render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str):
    return render_markdown(str(text or ""))


@register.filter(name="highlight")
def highlight_filter(code: str, language: str = "text"):
    return highlight_code(str(code or ""), language)


@register.filter
def spoken(value: str) -> str:
    """A schema value as words: "very-often" reads "very often"."""
    return str(value or "").replace("-", " ")
