"""Lines of entities: what a generator is told about one document.

One line per sentence of the source that holds at least one entity mention, in order; each slot is the
published item that stands for the mention (its name, marked when it is a generalisation) or a blank when the
entity was deleted. A generator also gets the source's sentence count. Nothing else about the source (no
words, no assertion, no offsets) reaches it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from anonpsy.twin.concepts import Hierarchy
from anonpsy.twin.mentions import Mention

BLANK = "___"
GENERAL_MARK = " (general)"


@dataclass(frozen=True)
class Slot:
    """One entity mention as a generator sees it: ``concept`` None is a blank (a deleted entity)."""

    concept: str | None
    name: str | None
    type: str
    general: bool = False

    def render(self) -> str:
        if self.name is None:
            return BLANK
        return self.name + (GENERAL_MARK if self.general else "")


@dataclass(frozen=True)
class Line:
    """The slots of one source sentence and that sentence's index."""

    sentence: int
    slots: tuple[Slot, ...]

    def render(self) -> str:
        return "; ".join(s.render() for s in self.slots)

    @property
    def named(self) -> tuple[Slot, ...]:
        return tuple(s for s in self.slots if s.concept is not None)


def entity_lines(mentions: Iterable[Mention], h: Hierarchy, item: Callable[[str], str | None] | None = None
                 ) -> list[Line]:
    """Lines of a document's entity mentions; ``item(concept)`` maps a concept to its published item (None:
    deleted); without it every entity is shown as found."""
    by_sentence: dict[int, list[Slot]] = {}
    for m in sorted(mentions, key=lambda x: (x.sentence, x.start)):
        if not m.entity:
            continue
        it = m.concept if item is None else item(m.concept)
        t = h.type_of(m.concept)
        slot = Slot(None, None, t) if it is None else Slot(it, h.name(it), t, general=it in h and h[it].level > 0)
        by_sentence.setdefault(m.sentence, []).append(slot)
    return [Line(s, tuple(v)) for s, v in sorted(by_sentence.items())]


def render_lines(lines: Sequence[Line]) -> list[str]:
    """Lines as the prompt shows them."""
    return [ln.render() for ln in lines]
