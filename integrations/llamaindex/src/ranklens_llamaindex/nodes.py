"""Nodes as ranklens hits: :func:`to_hit` and :func:`to_light` (the hooks' converter)."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore

from ranklens.capture import ALL_FIELDS, Hit, LightHit


def to_hit(item: NodeWithScore) -> Hit:
    """A ranklens hit from a ``NodeWithScore``: the node id, its score, text and metadata,
    and the parent document (``ref_doc_id``) for ``key="parent"``."""
    return Hit.from_light(to_light(item, ALL_FIELDS))


def to_light(item: NodeWithScore, needs: frozenset[str]) -> LightHit:
    """A node as a :data:`~ranklens.capture.hits.LightHit` (this package's
    :data:`~ranklens.capture.hits.Converter`); the parent is ``ref_doc_id``, and the
    chunk's character range in it ``start_char_idx``/``end_char_idx`` (which LlamaIndex's
    node parsers set)."""
    node = item.node
    light = (
        node.id_,  # the field behind node_id, without the property's cost
        item.score,
        getattr(node, "text", None),
        node.ref_doc_id if "parent" in needs else None,
        dict(node.metadata or {}) if "metadata" in needs else None,
    )
    if "positions" in needs:
        start = getattr(node, "start_char_idx", None)
        return (*light, (start, getattr(node, "end_char_idx", None)))
    return light
