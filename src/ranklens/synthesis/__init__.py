"""Test sets without labels: :func:`synthesize` (questions generated from a corpus by any
callable, each with its provenance and every filter counted; how the generator is called is
``calls=ranklens.Calling(...)``), the offline stand-in generator (:class:`OfflineGenerator`,
for tests and the demo), and :func:`check_dataset` (leakage and label-quality findings of
any labelled set). Provenance rows (:class:`ProvenanceRow`) and findings (:class:`Finding`)
are records whose ``to_dict()`` is the plain data; ``Provenance.to_pandas()`` and
``DatasetCheck.to_pandas()`` give them as tables."""

from .check import KINDS, DatasetCheck, Finding, check_dataset
from .offline import OfflineGenerator
from .provenance import STATUSES, Provenance, ProvenanceRow
from .result import Synthesis
from .synthesize import synthesize

__all__ = [
    "KINDS",
    "STATUSES",
    "DatasetCheck",
    "Finding",
    "OfflineGenerator",
    "Provenance",
    "ProvenanceRow",
    "Synthesis",
    "check_dataset",
    "synthesize",
]
