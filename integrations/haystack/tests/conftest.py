"""Haystack test helpers."""

from __future__ import annotations

import os

# Haystack's usage telemetry would try the network when a pipeline runs (.ci/run sets this
# too); read when haystack is first imported.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")

import pytest
from haystack import Document
from haystack.document_stores.in_memory import InMemoryDocumentStore


def store_of(dataset):
    """An in-memory store of a dataset's corpus, ``meta["file_id"]`` = the document id."""
    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(id=d, content=v["text"], meta={"file_id": d})
            for d, v in dataset.corpus.items()
            if v["text"]
        ]
    )
    return store


@pytest.fixture(name="store_of", scope="session")
def store_of_fixture():
    return store_of
