"""The adapter contract: what a retriever is to ranklens, and how framework packages plug
in without the core importing them.

* :class:`RetrieverAdapter`: ``retrieve(query, query_id, k) -> list[Hit]`` (and/or
  ``aretrieve`` with ``is_async = True``) and ``config()``, whose value identifies the
  retriever in the run log.
* :class:`FunctionRetriever`: a plain function as a retriever.
* :class:`Staged`: what a retrieval returns when it ran a pipeline: its final hits (a list
  of them, as any retrieval returns) carrying each stage's output in ``stages``
  (:class:`~ranklens.capture.records.Stage` records, hits in any form the runner takes).
  The runner maps every stage's hits with its ``key`` and keeps them in
  ``Retrieval.stages``. An adapter of a framework's pipeline returns one
  from ``retrieve``/``aretrieve``; a plain function may too;
  :class:`~ranklens.capture.stages.Pipeline` is the adapter made of plain stage callables.
* :class:`AdapterPlugin`: what a framework package registers in the ``ranklens.adapters``
  entry-point group, named by the framework's top-level module (``llama_index``,
  ``langchain_core``, ``haystack``): ``matches(obj)``, ``wrap(obj)`` and,
  optionally, ``demo(dataset)`` (the retrievers ``ranklens demo`` runs).
  :func:`as_retriever` wraps a framework object through the plugin of any module in its
  class's MRO; :func:`register_adapter` adds a plugin at run time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..declared import ParameterError, data, declare, function, text
from ..errors import InputError
from ..plugins import entry_point_table
from .hits import Hit, coerce_hit
from .identity import state_digest
from .records import Stage, naming_keywords

ENTRY_POINT_GROUP = "ranklens.adapters"

PACKAGE_HINTS = {
    "llama_index": "ranklens-llamaindex",
    "langchain_core": "ranklens-langchain",
    "langchain_community": "ranklens-langchain",
    "langchain": "ranklens-langchain",
    "haystack": "ranklens-haystack",
}
"""Which package adapts the objects of a framework's top-level module."""


ADAPTER = declare(
    "RetrieverAdapter",
    {
        "query": data("the query's text"),
        "query_id": data("the query's id"),
        "k": data("how many hits to return (None: the retriever's own setting)"),
    },
    "What the runner passes to ``retrieve(query, query_id, k)`` and ``aretrieve``: the "
    "runner's checked values (a text, an id, a whole number >= 1 or None).",
)
REGISTER_ADAPTER = declare("register_adapter", {
    "module": text(None, "the framework's top-level module (llama_index, haystack, ...)"),
    "plugin": data("an AdapterPlugin (name, matches, wrap; demo, interleave, bm25 optional)"),
})  # fmt: skip


@ADAPTER.checks
class RetrieverAdapter:
    """Base of adapters. Implement :meth:`retrieve` (sync) and/or :meth:`aretrieve` (truly
    async; set ``is_async = True``), and :meth:`config`, whose value is hashed into the run
    log to refuse mixing configurations."""

    is_async: bool = False
    takes_k: bool = True
    """Whether the retriever is asked for ``k`` hits (False where its own top-k setting
    decides, as for LlamaIndex and LangChain retrievers): ``fetch_k`` needs it."""

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        raise NotImplementedError

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        return {"class": type(self).__name__}

    def index_info(self) -> dict[str, Any] | None:
        """What the retriever's index holds, where its framework exposes it:
        ``{"documents": n}`` (documents or chunks indexed) and ``"bytes"`` (its arrays);
        None when unknown. A sweep shows it beside each configuration's latency."""
        return None


def array_bytes(obj: Any, depth: int = 2) -> int | None:
    """Bytes held by the numpy arrays an index object keeps in its attributes (and in the
    dicts and lists they hold, ``depth`` levels down), e.g. a bm25s index's sparse score
    matrix; None when it holds none."""
    total, found = 0, False
    stack = [(obj, depth)]
    while stack:
        x, d = stack.pop()
        if hasattr(x, "nbytes") and hasattr(x, "dtype") and type(x).__module__ == "numpy":
            total, found = total + int(x.nbytes), True
            continue
        if d <= 0:
            continue
        if isinstance(x, dict):
            stack += [(v, d - 1) for v in x.values()]
        elif isinstance(x, (list, tuple)) and len(x) <= 64:
            stack += [(v, d - 1) for v in x]
        elif hasattr(x, "__dict__") and not isinstance(x, type):
            stack += [(v, d - 1) for v in vars(x).values()]
    return total if found else None


STAGED = declare("Staged", {
    "hits": data("the retrieval's final hits (any hit form the runner takes)"),
    "stages": data("each stage's output in pipeline order: Stage records"),
})  # fmt: skip


class Staged(list[Any]):
    """A retrieval's final hits (this list) with the stages that made them (``stages``:
    :class:`~ranklens.capture.records.Stage` records in pipeline order, their hits in any
    form the runner takes). Return it from an adapter's ``retrieve`` (or a plain
    function retriever) to hand the stages to the runner, which maps each stage's hits
    with its ``key`` into ``Retrieval.stages``. A stage list that is not
    ``Stage`` records is an error naming the first bad item."""

    __slots__ = ("stages",)

    def __init__(self, hits: Iterable[Any], stages: Iterable[Stage]):
        super().__init__(hits)
        if isinstance(stages, (str, bytes, Mapping)) or not isinstance(stages, Iterable):
            raise ParameterError(
                f"Staged: stages must be a list of ranklens.capture.Stage records, got "
                f"{type(stages).__name__}"
            )
        self.stages: list[Stage] = list(stages)
        for i, st in enumerate(self.stages):
            if not isinstance(st, Stage):
                raise ParameterError(
                    f"Staged: stage {i + 1} must be a ranklens.capture.Stage record, got "
                    f"{type(st).__name__} {st!r:.60}"
                )


naming_keywords(Staged, STAGED)


def keywords_taken(fn: Callable[..., Any]) -> tuple[bool, bool, bool]:
    """``(async, takes query_id, takes k)`` of a callable, by its signature (``**kwargs``
    takes both; an object with an ``async __call__`` is async)."""
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    )
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return is_async, var_kw or "query_id" in params, var_kw or "k" in params


class FunctionRetriever(RetrieverAdapter):
    """A plain function as a retriever: ``f(query)``, ``f(query, query_id)`` or with ``k``
    (by parameter name), sync or ``async``, returning hits as ids, ``(id, score)`` pairs,
    dicts or :class:`~ranklens.Hit`."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.is_async, self._pass_id, self._pass_k = keywords_taken(fn)
        self.takes_k = self._pass_k

    def _kwargs(self, query_id: str, k: int | None) -> dict[str, Any]:
        kw: dict[str, Any] = {}
        if self._pass_id:
            kw["query_id"] = query_id
        if self._pass_k:
            kw["k"] = k
        return kw

    def retrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        return _hits(self.fn(query, **self._kwargs(query_id, k)), query_id)

    async def aretrieve(self, query: str, query_id: str, k: int | None) -> list[Hit]:
        return _hits(await self.fn(query, **self._kwargs(query_id, k)), query_id)

    @property
    def name(self) -> str:
        """What the run is called by default: the function's name (a ``partial``'s
        function, a callable object's class; ``lambda`` for a lambda)."""
        target = getattr(self.fn, "func", self.fn)
        name = getattr(target, "__name__", None) or type(target).__name__
        return "lambda" if name == "<lambda>" else str(name)

    def config(self) -> dict[str, Any]:
        """The function's name and :func:`~ranklens.capture.identity.state_digest` (its
        code, closure values, partial arguments or instance state)."""
        fn = self.fn
        target = getattr(fn, "func", fn)  # a functools.partial names its function
        return {
            "function": f"{getattr(target, '__module__', '?')}."
            f"{getattr(target, '__qualname__', type(target).__name__)}",
            "state": state_digest(fn),
        }


def _hits(items: Any, query_id: str) -> list[Hit]:
    """A retriever's answer as hits; anything but a list-like of hits is a TypeError, which
    the runner records as that query's failure (a string would otherwise become one id per
    character, a dict its keys, None an empty ranking). A :class:`Staged` answer stays
    one, its stages kept."""
    if type(items) is Staged:
        return Staged([coerce_hit(x, query_id, i + 1) for i, x in enumerate(items)], items.stages)
    if (
        items is None
        or isinstance(items, (str, bytes, bytearray, Mapping))
        or not isinstance(items, Iterable)
    ):
        kind = "None" if items is None else type(items).__name__
        raise TypeError(
            f"the retriever returned {kind} for query {query_id!r}; expected a list of hits "
            "(ids, (id, score) pairs, dicts or ranklens.Hit)"
        )
    return [coerce_hit(x, query_id, i + 1) for i, x in enumerate(items)]


ADAPTER_PLUGIN = declare("AdapterPlugin", {
    "name": text(None, "the framework's name"),
    "matches": function("matches(obj) -> bool: whether obj is the framework's retriever"),
    "wrap": function("wrap(obj) -> RetrieverAdapter"),
    "demo": function("demo(dataset) -> {run name: (retriever, run options)}", none=True),
    "interleave": function("interleave(a, b, interleaving) -> the framework's retriever",
                           none=True),
    "bm25": function("bm25(chunks, k) -> the framework's BM25 retriever", none=True),
})  # fmt: skip


@ADAPTER_PLUGIN.checks
@dataclass(frozen=True)
class AdapterPlugin:
    """A framework package's entry into ranklens (see the module docstring).

    ``wrap(obj)`` returns a :class:`RetrieverAdapter`; ``demo``
    (optional) returns ``{run name: (retriever, run options)}`` for a
    :class:`~ranklens.Dataset` with a corpus; ``interleave`` (optional) wraps two of the
    framework's retrievers and a :class:`ranklens.monitoring.interleaving.Interleaving`
    into the framework's own kind of retriever (``ranklens.interleave``); ``bm25``
    (optional) builds the framework's BM25 retriever over given chunks, ``bm25(chunks, k)``
    with ``chunks`` a list of ``(doc_id, start, end, text)``, each chunk keeping its source
    document and range (the demo's chunking comparison).
    """

    name: str
    matches: Callable[[Any], bool]
    wrap: Callable[..., RetrieverAdapter]
    demo: Callable[[Any], dict[str, tuple[Any, dict[str, Any]]]] | None = None
    interleave: Callable[[Any, Any, Any], Any] | None = None
    bm25: Callable[[list[tuple[str, int, int, str]], int], Any] | None = None


_PLUGINS: dict[str, AdapterPlugin] = {}


@REGISTER_ADAPTER.checks
def register_adapter(module: str, plugin: AdapterPlugin) -> AdapterPlugin:
    """Register ``plugin`` for objects whose class (or a base) lives in top-level module
    ``module`` (as an entry point of group ``ranklens.adapters`` named ``module`` does)."""
    if not isinstance(plugin, AdapterPlugin):
        raise ParameterError(
            f"register_adapter: plugin must be an AdapterPlugin(name, matches, wrap), got "
            f"{type(plugin).__name__}"
        )
    for field in ("matches", "wrap", "demo", "interleave", "bm25"):
        fn = getattr(plugin, field)
        if (fn is not None or field in ("matches", "wrap")) and not callable(fn):
            raise ParameterError(
                f"register_adapter: plugin.{field} must be a callable, got {fn!r:.80}"
            )
    _PLUGINS[module] = plugin
    return plugin


def plugin_for_module(module: str) -> AdapterPlugin | None:
    """The plugin registered for a top-level module, loading its entry point if needed."""
    plugin = _PLUGINS.get(module)
    if plugin is None and module in entry_point_table(ENTRY_POINT_GROUP):
        plugin = _PLUGINS[module] = entry_point_table(ENTRY_POINT_GROUP)[module].load()
    return plugin


def plugins() -> list[tuple[str, AdapterPlugin]]:
    """Every plugin installed or registered, as ``(module, plugin)`` (entry points loaded;
    one that fails to import is skipped, as its framework is then unusable)."""
    out = []
    for module in sorted(set(_PLUGINS) | set(entry_point_table(ENTRY_POINT_GROUP))):
        try:
            plugin = plugin_for_module(module)
        except ImportError:
            continue
        if plugin is not None:
            out.append((module, plugin))
    return out


def _roots(obj: Any) -> list[str]:
    # the modules of the object's classes, and of its metaclass (Haystack's @component
    # classes keep the user's module but get haystack's metaclass)
    classes = [*type(obj).__mro__, type(type(obj))]
    return list(dict.fromkeys(c.__module__.split(".")[0] for c in classes))


def plugin_of(obj: Any) -> AdapterPlugin | None:
    """The plugin of the framework ``obj`` belongs to (through the modules of its classes),
    or None; only that framework's entry point is loaded."""
    for root in _roots(obj):
        plugin = plugin_for_module(root)
        if plugin is not None and plugin.matches(obj):
            return plugin
    return None


def as_retriever(obj: Any) -> RetrieverAdapter:
    """An adapter for ``obj``: itself if it is one; a framework object wrapped by its
    package's plugin; a :class:`FunctionRetriever` for a callable. A framework object whose
    package is not installed is an error naming the package."""
    if isinstance(obj, RetrieverAdapter):
        return obj
    plugin = plugin_of(obj)
    if plugin is not None:
        return plugin.wrap(obj)
    roots = _roots(obj)
    hint = next((PACKAGE_HINTS[r] for r in roots if r in PACKAGE_HINTS), None)
    if hint:
        raise InputError(
            f"a {type(obj).__name__} needs its adapter package: pip install {hint} "
            f"(or pip install 'ranklens[{hint.split('-', 1)[1]}]')"
        )
    if callable(obj):
        return FunctionRetriever(obj)
    raise InputError(f"not a retriever: {type(obj).__name__} is neither callable nor an adapter")
