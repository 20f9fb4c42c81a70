"""How a lesson knows what it says: every claim and key point names its evidence, and the
validator refuses one without it, so a learner can always see whether a fact was measured here,
read in a library's source, taken from a vendor's documentation or from a seed document.

In a lesson file (`evidence` is a list; each item has exactly one of these keys):

    evidence:
      - experiment: acks-late-long-body        # a lab experiment (lessons/experiments/<slug>.yaml)
        checks: [receipts, running_at_once]    # ... and the checks of it that show the claim
      - measured: 3                            # item 3 of lessons/measurements.md (measured here)
      - seed: 002_eff311edd8116a33.txt         # a file in ../shared/seeds/, named in seed_cases.yaml
        passage: "Each hour of waiting adds one more copy."   # its words that back this, < 10
      - source: {package: kombu, versions: ">=5.7,<5.8",
                 module: kombu.transport.redis, function: QoS.restore_visible,
                 shows: "ceil = time() - self.visibility_timeout"}   # text in that function
      - docs: {title: "Consumer Acknowledgements and Publisher Confirms", version: "RabbitMQ 4.1",
               url: "https://www.rabbitmq.com/docs/confirms",
               quote: "...at most 30 words, verbatim...", read: 2026-12-05}
    versions: {rabbitmq: ">=4.0"}              # required when the text names a product version

A claim whose text names a product with a version ("RabbitMQ 4.0", "Celery 5.5") must say in
`versions` which versions of that product it holds for. An experiment is refused as evidence
for a claim whose `versions` exclude what the lab runs (lessons/lab_versions.py), and
`validatelessons` checks every `shows:` against the installed source (lessons/evidence_check.py).
Each kind opens a page of its own from "How we know" (lessons/evidence_views.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import ClassVar

from pydantic import ValidationInfo, field_validator, model_validator

from lessons.evidence_context import experiments_dir_shown, seed_says
from lessons.experiment_refs import checks_problem
from lessons.lab_versions import ALWAYS, version_allows
from lessons.yamlschema import Slug, Text, YamlModel, refusal

KINDS = ("experiment", "measured", "seed", "source", "docs")
# Product names a lesson may qualify with versions (the keys of `versions` and `checked_against`).
PRODUCTS = {
    "celery": "Celery",
    "kombu": "kombu",
    "redis": "Redis",
    "redis-py": "redis-py",
    "rabbitmq": "RabbitMQ",
    "sqs": "SQS",
    "django": "Django",
    "python": "Python",
    "flower": "Flower",
}
# "RabbitMQ 4.0", "Celery 5.5.0", "kombu 5.3+", "Redis 7": a product named with a version number.
_MENTION = re.compile(
    r"\b(" + "|".join(re.escape(p) for p in PRODUCTS.values()) + r")\s+v?(\d+(?:\.\d+)*)\b",
    re.IGNORECASE,
)
# A PEP 440-style range kept simple: ">=4.0", ">=3.11.15,<4.3", "==5.7.*", "4.1".
_SPEC = re.compile(
    r"^\s*(?:(?:==|!=|>=|<=|~=|>|<)?\s*\d+(?:\.(?:\d+|\*))*\s*)(?:,\s*(?:==|!=|>=|<=|~=|>|<)\s*\d+(?:\.(?:\d+|\*))*\s*)*$"
)


def _spec(value: str, where: str = "versions") -> str:
    if not _SPEC.match(value):
        raise refusal("versions", f"{value!r} is not a version range (write e.g. '>=5.7,<5.8')")
    return value.strip()


def _products(versions: dict[str, str] | None) -> dict[str, str] | None:
    if versions is None:
        return None
    for product, spec in versions.items():
        if product not in PRODUCTS:
            expected = ", ".join(PRODUCTS)
            raise refusal("versions", f"unknown product {product!r} (expected one of: {expected})")
        _spec(str(spec))
    return {k: str(v) for k, v in versions.items()}


QUOTE_MAX_WORDS = 30
# A seed's passage stays under ten words: the seeds' facts are ours, their sentences are not
# (no run of ten words copied), so a case study quotes only the few words that back a claim.
PASSAGE_MAX_WORDS = 9


class SourceRef(YamlModel):
    package: Text
    versions: Text
    module: Text
    function: Text
    shows: list[Text]

    @field_validator("versions")
    @classmethod
    def _range(cls, value: str) -> str:
        return _spec(value)

    @field_validator("shows", mode="before")
    @classmethod
    def _lines(cls, value):
        """One line, or a list of them; each must appear in the function's source."""
        lines = [value] if isinstance(value, str) else value
        if not isinstance(lines, list) or not lines:
            raise refusal("shows", "give the text (or list of texts) the function's source shows")
        return lines


class DocRef(YamlModel):
    title: Text
    version: Text
    url: Text | None = None
    quote: Text
    read: date

    @field_validator("quote")
    @classmethod
    def _short(cls, value: str) -> str:
        words = len(value.split())
        if words > QUOTE_MAX_WORDS:
            raise refusal(
                "quote", f"{words} words; quote at most {QUOTE_MAX_WORDS}, verbatim from the page"
            )
        return value

    @field_validator("url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith("https://"):
            raise refusal("url", f"{value!r}: a documentation link must start with https://")
        return value


class EvidenceModel(YamlModel):
    experiment: Slug | None = None
    checks: list[Text] | None = None
    measured: int | None = None
    seed: Text | None = None
    passage: Text | None = None
    source: SourceRef | None = None
    docs: DocRef | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> EvidenceModel:
        given = [k for k in KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise refusal(
                "evidence", f"give exactly one of: {', '.join(KINDS)} (found {len(given)})"
            )
        return self

    @model_validator(mode="after")
    def _checks_shown(self, info: ValidationInfo) -> EvidenceModel:
        if self.checks is not None and self.experiment is None:
            raise refusal("checks", "`checks` belongs to an `experiment` reference")
        known = (info.context or {}).get("experiment_checks")
        if self.experiment is not None and known is not None:
            problem = checks_problem(
                self.experiment, tuple(self.checks or ()), known.get(self.experiment)
            )
            if problem:
                raise refusal("checks", problem)
        return self

    @field_validator("experiment")
    @classmethod
    def _experiment_exists(cls, slug: str | None, info: ValidationInfo) -> str | None:
        known = (info.context or {}).get("experiments")
        if slug is not None and known is not None and slug not in known:
            raise refusal(
                "experiment", f"no experiment with slug {slug!r} in {experiments_dir_shown()}"
            )
        return slug

    @field_validator("seed")
    @classmethod
    def _seed_exists(cls, name: str | None, info: ValidationInfo) -> str | None:
        known = (info.context or {}).get("seeds")
        if name is not None and known is not None and name not in known:
            raise refusal("seed", f"no seed file {name!r} in the seeds folder")
        cases = (info.context or {}).get("seed_cases")
        if name is not None and cases is not None and name not in cases:
            raise refusal(
                "seed",
                f"seed {name!r} has no case study in lessons/seed_cases.yaml "
                "(give it a title and a summary there)",
            )
        return name

    @model_validator(mode="after")
    def _seed_passage(self, info: ValidationInfo) -> EvidenceModel:
        """A seed is cited with the passage of it that backs the claim, checked against the
        file where the seeds folder is here."""
        if self.passage is not None and self.seed is None:
            raise refusal("passage", "`passage` belongs to a `seed` reference")
        if self.seed is None:
            return self
        if self.passage is None:
            raise refusal(
                "seed",
                f"give the `passage` of {self.seed} that backs this: its own words, "
                f"at most {PASSAGE_MAX_WORDS}",
            )
        words = len(self.passage.split())
        if words > PASSAGE_MAX_WORDS:
            raise refusal(
                "passage",
                f"{words} words; quote at most {PASSAGE_MAX_WORDS} (a seed's sentences are not "
                "ours to copy)",
            )
        known = (info.context or {}).get("seeds")
        if known is not None and self.seed in known and not seed_says(self.seed, self.passage):
            raise refusal(
                "passage", f"{self.passage!r} is not in {self.seed}: quote it word for word"
            )
        return self

    @field_validator("measured")
    @classmethod
    def _fact_exists(cls, item: int | None, info: ValidationInfo) -> int | None:
        known = (info.context or {}).get("facts")
        if item is not None and known is not None and item not in known:
            raise refusal("measured", f"lessons/measurements.md has no item {item}")
        return item


def version_mentions(*texts: str) -> dict[str, str]:
    """Products named with a version in `texts`: {product key: the first version named}."""
    by_name = {name.lower(): key for key, name in PRODUCTS.items()}
    found: dict[str, str] = {}
    for text in texts:
        for match in _MENTION.finditer(text or ""):
            found.setdefault(by_name[match.group(1).lower()], match.group(2))
    return found


class Backed(YamlModel):
    """Something a lesson asserts: it carries its evidence, and versions when it names one."""

    text_fields: ClassVar[tuple[str, ...]] = ()
    evidence: list[EvidenceModel]
    versions: dict[str, str] | None = None

    @field_validator("evidence")
    @classmethod
    def _some(cls, items: list) -> list:
        if not items:
            raise refusal(
                "evidence",
                "no evidence: name an experiment, measurement, seed, source or docs page",
            )
        return items

    @field_validator("versions", mode="before")
    @classmethod
    def _versions(cls, value):
        if value is not None and not isinstance(value, dict):
            raise refusal("versions", "expected a mapping of product: version range")
        return _products(value)

    @model_validator(mode="after")
    def _experiments_within_versions(self, info: ValidationInfo):
        """An experiment measures the versions the lab runs; it cannot back a claim about others."""
        known = (info.context or {}).get("experiment_checks")
        lab = (info.context or {}).get("lab_versions")
        if not known or not lab or not self.versions:
            return self
        for item in self.evidence:
            exp = known.get(item.experiment) if item.experiment else None
            if exp is None:
                continue
            for product in sorted({*exp.brokers, *ALWAYS}):
                spec = self.versions.get(product)
                if spec and product in lab and not version_allows(spec, lab[product]):
                    raise refusal(
                        "versions",
                        f"experiment {exp.slug} runs on {PRODUCTS[product]} {lab[product]}, "
                        f"which versions {{{product}: '{spec}'}} excludes; cite documentation "
                        "or source for those versions instead",
                    )
        return self

    @model_validator(mode="after")
    def _versions_for_mentions(self):
        texts = [getattr(self, f) or "" for f in self.text_fields]
        named = version_mentions(*texts)
        missing = [k for k in named if k not in (self.versions or {})]
        if missing:
            shown = ", ".join(f"{PRODUCTS[k]} {named[k]}" for k in missing)
            keys = ", ".join(missing)
            raise refusal(
                "versions",
                f"names {shown} but does not say which versions it holds for (add versions: {{{keys}: ...}})",
            )
        return self


# --- what pages and the command show ----------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence as pages show it: `kind`, a one-line `label`, an optional `url`
    (the experiment's page or the documentation), `experiment` (its slug, to link) and
    `detail`, the fields it was written with as (name, value) pairs, so a page can lay them
    out (lessons/evidence_display.py)."""

    kind: str
    label: str
    url: str | None = None
    experiment: str | None = None
    detail: tuple[tuple[str, str], ...] = ()
    shows: tuple[str, ...] = ()  # source: the lines the function must contain
    checks: tuple[str, ...] = ()  # experiment: the ids of the checks that show the claim
    quote: str | None = None  # docs: verbatim, at most 30 words; seed: its passage, at most 9
    read: str | None = None  # docs: when the page was read (ISO date)
    version: str | None = None  # docs: the product version the page documents

    @property
    def href(self) -> str | None:
        """Where a learner goes to see it: the experiment's page (run it there) or the docs."""
        if self.experiment is not None:
            from django.urls import NoReverseMatch, reverse

            try:
                return reverse("lab:experiments:detail", kwargs={"slug": self.experiment})
            except NoReverseMatch:
                return None
        return self.url

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "label": self.label, "url": self.href}
        if self.kind == "source":
            out["shows"] = list(self.shows)
        elif self.kind == "experiment":
            out["checks"] = list(self.checks)
        elif self.kind == "docs":
            out.update(quote=self.quote, read=self.read, version=self.version)
        return out


def evidence_from_model(item: EvidenceModel) -> Evidence:
    if item.experiment is not None:
        return Evidence(
            "experiment",
            f"lab experiment {item.experiment}",
            experiment=item.experiment,
            detail=(("experiment", item.experiment),),
            checks=tuple(item.checks or ()),
        )
    if item.measured is not None:
        return Evidence(
            "measured",
            f"measured on this stack (lessons/measurements.md item {item.measured})",
            detail=(("item", str(item.measured)),),
        )
    if item.seed is not None:
        return Evidence(
            "seed", f"seed document {item.seed}", detail=(("seed", item.seed),), quote=item.passage
        )
    if item.source is not None:
        s = item.source
        return Evidence(
            "source",
            f"{s.package} {s.versions}: {s.module}, {s.function}",
            detail=tuple((k, getattr(s, k)) for k in ("package", "versions", "module", "function")),
            shows=tuple(s.shows),
        )
    d = item.docs
    return Evidence(
        "docs",
        f"{d.title} (documentation, {d.version})",
        url=d.url,
        detail=(("title", d.title), ("version", d.version)),
        quote=d.quote,
        read=d.read.isoformat(),
        version=d.version,
    )
