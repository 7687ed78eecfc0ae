"""Bundled domain prompts, and choosing one for a text through the model.

Each domain's system prompt tells the model what to extract from that kind
of text and to answer in the shape of `Extraction`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field

from redstring.domain.exceptions import LlmProviderError, UnknownDomainError
from redstring.domain.normalization import normalize_name

if TYPE_CHECKING:
    from collections.abc import Mapping

    from redstring.ports.llm import LlmProvider

#: The domain used when none is named and when classification fails.
DEFAULT_DOMAIN: Final = "general"
#: How many leading characters of a text `classify_domain` shows the model.
CLASSIFICATION_SAMPLE_CHARS: Final = 2000


class DomainPrompt(BaseModel):
    """A named kind of text and the system prompt that extracts from it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    description: str
    system_prompt: str


class DomainChoice(BaseModel):
    """The schema the model fills when classifying a text: a domain id and its confidence.

    Lenient on purpose: `classify_domain` checks the values and falls back
    instead of treating an odd answer as a failed call.
    """

    model_config = ConfigDict(frozen=True)

    domain: str
    confidence: float


class DomainClassification(BaseModel):
    """The domain chosen for a text, with the model's confidence on `0..1`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain_id: str
    confidence: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)


_OUTPUT_CONTRACT = """\
Answer with one JSON object and nothing else, in exactly this shape:

{"entities": [{"name": "...", "entity_type": "...", "description": "...",
   "confidence": 0.9, "properties": {"key": "value"}}],
 "relationships": [{"source_name": "...", "target_name": "...",
   "relationship_type": "...", "description": "...", "confidence": 0.8}]}

Rules:
- The text may be one part of a longer document: extract what this part
  says, and do not guess at what the rest might say.
- Extract only what the text states or directly implies; never add outside
  knowledge, and never invent an entity to complete a relationship.
- Use each entity's most complete name as written in the text ("Ada
  Lovelace", not "she" or "Lovelace"); resolve pronouns and short forms to
  that name. List each entity once.
- entity_type and relationship_type are short lower_snake_case labels. Prefer
  the suggested types above; use another only when none fits.
- Every relationship's source_name and target_name must be exactly the name
  of an entity in your "entities" list. Direct it so that it reads as
  "source relationship_type target".
- description is one short sentence drawn from the text, or null.
- confidence is a number from 0 to 1: how clearly the text supports the row.
- properties holds only facts the text states (dates, amounts, roles, places)
  as strings or numbers; use {} when there are none.
- When the text contains nothing to extract, answer
  {"entities": [], "relationships": []}.
"""


def _prompt(role: str, entity_types: str, relationship_types: str, guidance: str) -> str:
    return (
        f"You extract a knowledge graph from {role}.\n\n"
        f"Suggested entity types: {entity_types}.\n"
        f"Suggested relationship types: {relationship_types}.\n\n"
        f"{guidance}\n\n{_OUTPUT_CONTRACT}"
    )


_BUNDLED: tuple[DomainPrompt, ...] = (
    DomainPrompt(
        id="general",
        name="General",
        description="Any text without a more specific domain.",
        system_prompt=_prompt(
            "text of any kind",
            "person, organization, location, event, product, work, concept, date",
            "works_for, member_of, located_in, part_of, founded, created, owns, "
            "participated_in, related_to",
            "Extract the people, organizations, places, events, products, works and "
            "concepts the text is about, and how they relate. Skip generic nouns that "
            'name no particular thing ("the company", "a report") unless the text '
            "identifies which one is meant.",
        ),
    ),
    DomainPrompt(
        id="news",
        name="News",
        description="News reporting: who did what, where and when.",
        system_prompt=_prompt(
            "news reporting",
            "person, organization, government_body, location, event, date, publication, product",
            "said, reported, works_for, leads, member_of, located_in, occurred_in, "
            "occurred_on, participated_in, affected, opposed, supported, met_with",
            "Extract the actors, places and events of the story. Record who said or "
            'reported something with a "said" or "reported" relationship and put '
            "the gist in its description. Record a person's role or title as a "
            'property ("role"), and an event\'s date as a property ("date", as '
            "written) as well as an occurred_on relationship when the date is central. "
            "Attribute claims to whoever made them; do not state an allegation as fact.",
        ),
    ),
    DomainPrompt(
        id="business",
        name="Business",
        description="Companies, markets, deals and financial reporting.",
        system_prompt=_prompt(
            "business and financial text",
            "company, person, product, brand, market, financial_metric, deal, "
            "location, industry, regulator",
            "acquired, invested_in, subsidiary_of, partnered_with, competes_with, "
            "supplies, customer_of, leads, works_for, headquartered_in, operates_in, "
            "reported",
            "Extract companies, their people and products, and the deals and figures "
            'that connect them. Record an executive\'s title as a property ("role"). '
            "Record amounts, currencies, percentages and reporting periods as "
            'properties exactly as written ("amount": "$4.2 billion", "period": '
            '"Q3 2024"); do not convert or compute. Distinguish an announced or '
            "proposed deal from a completed one in its description.",
        ),
    ),
    DomainPrompt(
        id="academic",
        name="Academic",
        description="Research papers, theses and scholarly writing.",
        system_prompt=_prompt(
            "academic and scientific writing",
            "researcher, institution, publication, method, dataset, theory, concept, "
            "field, finding, venue",
            "authored, affiliated_with, cites, proposes, uses, evaluated_on, "
            "extends, contradicts, supports, funded_by, published_in",
            "Extract the authors and their institutions, the methods, datasets, "
            "theories and findings the text discusses, and how they build on or "
            "contradict one another. Name a method or dataset as the text does, with "
            'its acronym in properties ("acronym") when both appear. Record metrics '
            "and results as properties of the finding, as written. Keep the text's "
            "hedging: a hypothesis is not a finding.",
        ),
    ),
    DomainPrompt(
        id="technical",
        name="Technical",
        description="Software, systems and engineering documentation.",
        system_prompt=_prompt(
            "technical documentation about software, systems or engineering",
            "software, library, component, service, api, protocol, data_format, "
            "standard, organization, person, hardware, configuration",
            "depends_on, implements, part_of, calls, exposes, configures, replaces, "
            "compatible_with, maintained_by, runs_on, stores_data_in",
            "Extract the systems, components, interfaces and standards the text "
            "describes, and how they depend on and talk to each other. Record "
            "versions, ports, file paths and default values as properties exactly as "
            'written ("version": "2.1"). Use the identifier as written for code '
            'names ("HttpClient", "GET /v1/items"); do not extract ordinary '
            "variables or every function mentioned in passing.",
        ),
    ),
)

_DOMAINS: Mapping[str, DomainPrompt] = MappingProxyType({each.id: each for each in _BUNDLED})


def available_domains() -> list[str]:
    """The ids of the bundled domains, sorted."""
    return sorted(_DOMAINS)


def get_domain(domain_id: str) -> DomainPrompt:
    """The bundled domain with this exact id.

    Raises:
        UnknownDomainError: no bundled domain has this id.
        ValueError: `domain_id` is not a string.
    """
    if not isinstance(domain_id, str):
        raise ValueError(f"domain_id must be a string, got {type(domain_id).__name__}")
    try:
        return _DOMAINS[domain_id]
    except KeyError:
        raise UnknownDomainError(domain=domain_id, available=available_domains()) from None


def _classification_prompt() -> str:
    listing = "\n".join(f"- {each}: {_DOMAINS[each].description}" for each in available_domains())
    return (
        "You classify a text into exactly one of these domains:\n\n"
        f"{listing}\n\n"
        "You see the beginning of the text only. Choose the domain whose "
        f'description fits it best, and "{DEFAULT_DOMAIN}" when none fits clearly. '
        'Answer with one JSON object and nothing else: {"domain": "<one id from '
        'the list>", "confidence": <a number from 0 to 1>}.'
    )


async def classify_domain(text: str, provider: LlmProvider) -> DomainClassification:
    """Choose a bundled domain for `text` with one model call.

    The model sees the first `CLASSIFICATION_SAMPLE_CHARS` characters and
    answers a `DomainChoice`; its domain is matched to an id after
    `normalize_name`. Never raises an `LlmProviderError`: a failed call, an
    unknown domain or a confidence outside `0..1` gives `DEFAULT_DOMAIN` with
    confidence `0.0`.
    """
    fallback = DomainClassification(domain_id=DEFAULT_DOMAIN, confidence=0.0)
    try:
        choice = await provider.extract(
            text[:CLASSIFICATION_SAMPLE_CHARS],
            DomainChoice,
            system_prompt=_classification_prompt(),
        )
    except LlmProviderError:
        return fallback
    domain_id = normalize_name(choice.domain)
    if domain_id not in _DOMAINS or not 0.0 <= choice.confidence <= 1.0:  # NaN fails too
        return fallback
    return DomainClassification(domain_id=domain_id, confidence=choice.confidence)
