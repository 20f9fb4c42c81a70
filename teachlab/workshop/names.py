"""Nicknames: what a name shows, whether it shows anything, and what it looks like.

Two names collide when their confusable skeletons match (Unicode Technical Standard #39,
section 4: NFD, map each character to its prototype, NFD again). Python's standard library
has no confusables table (`unicodedata` stops at normalisation) and no package for one is
installed here, so this module carries a small table of its own: the Latin, Cyrillic and
Greek look-alikes, mapped to the Latin character they imitate the way Unicode's
confusables.txt maps them (its line `0430 ; 0061 ; MA` sends Cyrillic а to Latin a; its
line `006D ; 0072 006E ; MA` sends m to "rn"; capital I, digit 1 and | all go to small l).

Names are also compared without case, which UTS #39 does not do: two skeletons are taken,
one of the name as typed and one of its case-folded form, each folded at the end. Two names
collide when either pair matches, or when they are equal ignoring case (the seat's
`nickname_key`). So "Ivan" and "lvan" collide (capital I looks like small l), "Ivan" and
"ivan" collide (case), but "ivan" and "lvan" do not (the dot shows).

Limits of the table (confusables.txt has about 6,300 lines; this has under 150):
- Only Latin, Cyrillic and Greek letters, digits and a few dashes, quotes and brackets.
  Look-alikes from Armenian, Cherokee, Lisu and the like pass unless NFKC folds them (it
  folds the mathematical and full-width letters: 𝐕 and Ｖ become V).
- Small Cyrillic letters shaped like Latin small capitals (в к м н т з, and Greek κ) are
  mapped to that Latin letter, which confusables.txt does not do: folding turns Cyrillic
  "В" into "в", and it should still collide with "B". "вob" (small ve) and "bob" therefore collide too;
  a false collision costs one retry with another name, a missed one lets a seat pose as
  someone else.
"""

from __future__ import annotations

import re
import unicodedata

from glin_profanity import Filter

from teachlab.workshop.errors import WorkshopError
from teachlab.workshop.models import NICKNAME_MAX

# Characters that draw nothing, or a blank as wide as a letter, though Unicode does not class
# them as spaces or format characters: the Hangul fillers (Default_Ignorable_Code_Point in
# DerivedCoreProperties.txt), the Braille blank, combining grapheme joiner, variation
# selectors and the Khmer inherent vowels (also default-ignorable).
INVISIBLE = {
    "\u115f": "Hangul choseong filler",
    "\u1160": "Hangul jungseong filler",
    "\u3164": "Hangul filler",
    "\uffa0": "half-width Hangul filler",
    "\u2800": "Braille blank",
    "\u034f": "combining grapheme joiner",
    "\u17b4": "Khmer inherent vowel",
    "\u17b5": "Khmer inherent vowel",
    "\u180b": "Mongolian variation selector",
    "\u180c": "Mongolian variation selector",
    "\u180d": "Mongolian variation selector",
    "\u180e": "Mongolian vowel separator",
    "\u180f": "Mongolian variation selector",
}
INVISIBLE_RANGES = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))  # variation selectors
BLANK_AS_SPACE = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800"}

# confusables.txt prototypes for Latin, Cyrillic and Greek: look-alike → what it imitates.
CONFUSABLES: dict[str, str] = {}


def _alike(target: str, chars: str) -> None:
    for ch in chars:
        CONFUSABLES[ch] = target


# Capitals (Cyrillic, then Greek), as typed
_alike("A", "АΑ")
_alike("B", "ВΒ")
_alike("b", "Ь")  # Cyrillic capital soft sign
_alike("C", "СϹ")
_alike("E", "ЕΕ")
_alike("H", "НΗ")
_alike("J", "Ј")
_alike("K", "КΚ")
_alike("M", "МΜ")
_alike("N", "Ν")
_alike("O", "ОΟ0")  # with the digit zero
_alike("P", "РΡ")
_alike("S", "Ѕ")
_alike("T", "ТΤ")
_alike("X", "ХΧ")
_alike("Y", "УΥҮ")
_alike("V", "Ѵ")
_alike("Z", "Ζ")
_alike("l", "IІΙӀ1|ǀ")  # capital I (Latin, Cyrillic, Greek), palochka, one, bar
# Small letters
_alike("a", "аɑα")
_alike("c", "сϲ")
_alike("d", "ԁ")
_alike("e", "еҽ")
_alike("g", "ɡ")
_alike("h", "һ")
_alike("i", "іıɩιӏ")  # with the small palochka
_alike("j", "јϳ")
_alike("o", "оοσ")
_alike("p", "рρ")
_alike("q", "ԛ")
_alike("r", "г")
_alike("s", "ѕ")
_alike("u", "υ")
_alike("v", "νѵ")
_alike("w", "ԝ")
_alike("x", "х")
_alike("y", "уγү")
_alike("rn", "m")
# Small Cyrillic letters shaped like Latin small capitals (see the module docstring)
_alike("b", "в")
_alike("h", "н")
_alike("k", "кκ")
_alike("rn", "м")  # as m itself: a skeleton maps each character once
_alike("t", "т")
_alike("3", "з")
# Digits, dashes, quotes, brackets
_alike("3", "ЗƷ")
_alike("6", "б")
_alike("-", "\u2010\u2011\u2012\u2013\u2014\u2015\u2212")
_alike("'", "\u2018\u2019\u02bc\u02b9\u2032`\u00b4")
_alike('"', "\u201c\u201d\u2033")

# Words no participant may take: the room's host is the instructor, and "Instructor (host)"
# is the first thing a prankster types. Compared by skeleton, as whole words.
RESERVED_WORDS = ("instructor", "host", "teacher", "presenter", "moderator", "admin", "staff")


def is_invisible(ch: str) -> bool:
    code = ord(ch)
    return ch in INVISIBLE or any(lo <= code <= hi for lo, hi in INVISIBLE_RANGES)


def nickname_clean(raw: str) -> str:
    """What everyone will see: no control, format or invisible characters, spaces collapsed.

    A name with nothing visible left (only spaces, fillers, zero-width or format characters,
    or marks with no letter under them) is refused, saying which characters hid it.
    """
    raw = raw or ""
    kept: list[str] = []
    hidden: set[str] = set()
    for ch in raw:
        if ch in BLANK_AS_SPACE:
            hidden.add(INVISIBLE[ch])
            kept.append(" ")  # as wide as a letter: shown as the space it looks like
        elif is_invisible(ch) or unicodedata.category(ch)[0] == "C":
            hidden.add(INVISIBLE.get(ch) or unicodedata.name(ch, "control character").lower())
        else:
            kept.append(ch)
    text = " ".join("".join(kept).split())
    if not any(unicodedata.category(ch)[0] in "LNPS" for ch in text):
        if not raw.strip() and not hidden:
            raise WorkshopError("Pick a nickname so the room can tell you apart.")
        what = ", ".join(sorted(hidden)) if hidden else "spaces or marks alone"
        raise WorkshopError(
            f"That nickname would show as blank ({what[:120]}). "
            "Pick one with letters or digits the room can read."
        )
    if len(text) > NICKNAME_MAX:
        raise WorkshopError(f"Keep the nickname to {NICKNAME_MAX} characters or fewer.")
    return text


def _skeleton(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    mapped = "".join(CONFUSABLES.get(ch, ch) for ch in decomposed)
    return unicodedata.normalize("NFD", mapped).casefold()


def skeletons(text: str) -> tuple[str, str]:
    """The name's UTS #39 skeleton as typed, and that of its case-folded form (both folded)."""
    text = " ".join(unicodedata.normalize("NFKC", text).split())
    return _skeleton(text), _skeleton(text.casefold())


def nickname_key(text: str) -> str:
    """Equal for names that differ only in case or in how their letters are composed."""
    return unicodedata.normalize("NFKC", text).casefold()


def _words(skel: str) -> list[str]:
    return re.findall(r"[^\W_]+", skel)


def _reserved() -> set[str]:
    found = set()
    for word in RESERVED_WORDS:
        for form in (word, word.capitalize(), word.upper()):
            found.update(skeletons(form))
    return found


RESERVED_SKELETONS = _reserved()


def impersonates_host(name: str, *, host_names: list[str]) -> bool:
    """True when the name claims a host's title ("Instructor (host)") or a host's own name."""
    forms = skeletons(name)
    if any(w in RESERVED_SKELETONS for form in forms for w in _words(form)):
        return True
    mine = {"".join(_words(form)) for form in forms}
    for host in host_names:
        theirs = {"".join(_words(form)) for form in skeletons(host)} - {""}
        if mine & theirs:
            return True
    return False


# Profanity: glin-profanity's English list (a maintained library, pinned in requirements.txt),
# whole words only so "Scunthorpe", "Cocktail" and "Assistant" pass, with leetspeak
# ("Sh1thead") and look-alike letters folded. Its list has "shithead" and "butt" but not
# "butthead", the name the walk saw reach the projector, so a word that ends in an insult's
# tail ("-head", "-face") is also checked without it. The list lacks a few words no
# classroom projector should show; they are added here.
PROFANITY = Filter(
    {
        "languages": ["english"],
        "detect_leetspeak": True,
        "normalize_unicode": True,
        "custom_words": ["whore", "nazi", "hitler"],
    }
)
INSULT_TAILS = ("head", "face", "hole", "wipe", "bag", "wad", "brain", "breath", "licker", "sucker")


def _word_parts(name: str) -> list[str]:
    """The name's words, camel case split too ("ButtHead" is "Butt" and "Head")."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)
    return [w.casefold() for w in re.findall(r"[^\W_]+", spaced)]


def is_profane(name: str) -> bool:
    """True when the name, one of its words, or a word less an insult's tail is profane."""
    words = _word_parts(name)
    stems = [w.removesuffix(t) for w in words for t in INSULT_TAILS if w.endswith(t)]
    return any(PROFANITY.is_profane(text) for text in [name, *words, *stems] if len(text) > 1)
