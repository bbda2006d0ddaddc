"""Metric parameters, each declared once (:class:`Param`): its type, the range it may take
(:class:`Range`), its default, a one-line description and a reference. The validation and
its message, ``ranklens explain``'s parameter lines and the parameter table of
``docs/metrics.md`` are all derived from that one declaration, as scikit-learn writes its
messages from declared constraints (``sklearn.utils._param_validation``) and ir_measures
describes each parameter of a measure (``Measure.SUPPORTED_PARAMS``).

>>> p = Param(float, 0.9, range=Range(0, 1, "neither"), description="persistence")
>>> p.parse("0.8", "p", "rbp(p=0.8)")
0.8
>>> p.parse("1.5", "p", "rbp(p=1.5)")
Traceback (most recent call last):
...
ranklens.errors.MetricNameError: metric 'rbp(p=1.5)': p must be a number in (0, 1) ... got 1.5
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..declared import Range
from ..errors import MetricNameError, suggest


def _num(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Param:
    """A metric parameter, declared once.

    ``type``: ``float``, ``int``, ``bool``, ``str`` (with ``choices``), ``dict`` (grade to
    gain pairs, written ``{1:3.5,2:9}``) or ``tuple`` (numbers in [0, 1], ``[0.2,0.5]``);
    ``default`` (``None``: computed from the data, or required when the family's
    ``value_param``); ``range``: the :class:`Range` of a number; ``description``: one
    line; ``reference``: where the parameter is defined; ``arg``: the keyword of the
    metric function it feeds (default: its name). ``check``/``message`` are the older,
    free-form form of a range (a predicate and its words), still honoured.

    >>> p = Param(int, 0, range=Range(0, None), description="the collection size")
    >>> p.allowed(), p.parse("5", "docs", "utility(docs=5)")
    ('a whole number >= 0', 5)
    """

    type: type
    default: Any = None
    check: Callable[[Any], bool] | None = None
    message: str = ""
    choices: tuple[str, ...] = ()
    arg: str | None = None
    description: str = ""
    reference: str = ""
    range: Range | None = None

    def allowed(self) -> str:
        """What the parameter takes, in words: ``"a number in (0, 1)"``."""
        if self.choices:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.type is bool:
            return "true or false"
        if self.type is dict:
            return "grade:gain pairs with distinct grades >= 0, written like {1:3.5,2:9}"
        if self.type is tuple:
            return "numbers in [0, 1], written like [0.2,0.5,0.8]"
        kind = "a whole number" if self.type is int else "a number"
        if self.range is not None and str(self.range) == "any":
            return f"any {kind[2:]}"
        if self.range is not None:
            shown = str(self.range)
            return f"{kind} {'in ' if shown[0] in '[(' else ''}{shown}"
        if self.message:
            return f"{kind} ({self.message})"
        return kind

    def summary(self, key: str) -> str:
        """One line for explain and the reference: ``p: a number in (0, 1), default 0.9:
        persistence, ... (Moffat & Zobel 2008)``."""
        text = f"{key}: {self.allowed()}"
        if self.default is not None:
            text += f", default {_shown(self.default)}"
        if self.description:
            text += f": {self.description}"
        return text + (f" ({self.reference})" if self.reference else "")

    def refuse(self, key: str, got: Any, name: str, hint: str = "") -> MetricNameError:
        """The one message of a refused value: the metric, the parameter, what it takes
        (with its description) and what it got."""
        about = f" ({self.description})" if self.description else ""
        return MetricNameError(
            f"metric {name!r}: {key} must be {self.allowed()}{about}, got {_shown(got)}{hint}"
        )

    def validate(self, value: Any, key: str, name: str) -> Any:
        """``value`` if the declaration allows it (a number is checked against the range),
        else the declared message."""
        if self.type in (float, int) and value is not None:
            number = value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.refuse(key, value, name)
            if not math.isfinite(number) or (self.type is int and number != int(number)):
                raise self.refuse(key, value, name)
            if self.range is not None and number not in self.range:
                raise self.refuse(key, value, name)
            if self.check is not None and not self.check(number):
                raise self.refuse(key, value, name)
            return self.type(number)
        return value

    def parse(self, raw: str, key: str, name: str) -> Any:
        """The value of ``key=raw`` in metric ``name`` (a :class:`MetricNameError` names
        the metric, the parameter, what it takes and what it got)."""
        if self.choices:
            low = raw.lower()
            if low not in self.choices:
                raise self.refuse(key, raw, name, suggest(low, self.choices))
            return low
        if self.type is bool:
            low = raw.lower()
            if low not in _TRUE + _FALSE:
                raise self.refuse(key, raw, name)
            return low in _TRUE
        if self.type in (dict, tuple):
            try:
                return _parse_collection(self.type, raw)
            except ValueError:
                raise self.refuse(key, raw, name) from None
        try:
            value = float(raw)
        except ValueError:
            raise self.refuse(key, raw, name) from None
        if self.type is int and value.is_integer():
            value = int(value)
        return self.validate(value, key, name)


_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return f"{value:g}" if float(f"{value:g}") == value else repr(value)
    return str(value)


def _parse_collection(kind: type, raw: str) -> Any:
    """``{1:3.5, 2:9}`` (grade → gain; ``=`` may stand for ``:``) as sorted
    ``((1, 3.5), (2, 9.0))``, or ``[0.2, 0.5]`` as ``(0.2, 0.5)``; ``ValueError`` when
    the text is not such a collection."""
    text = raw.strip()
    opening, closing = ("{", "}") if kind is dict else ("[", "]")
    if not (text.startswith(opening) and text.endswith(closing)):
        raise ValueError(raw)
    items = [i.strip() for i in text[1:-1].split(",") if i.strip()]
    if kind is tuple:
        values = tuple(float(i) for i in items)
        if not values or not all(0.0 <= x <= 1.0 for x in values):
            raise ValueError(raw)
        return values
    pairs: dict[int, float] = {}
    for item in items:
        grade, _, gain = item.replace("=", ":").partition(":")
        if int(grade) < 0 or int(grade) in pairs:
            raise ValueError(raw)
        pairs[int(grade)] = float(gain)
    return tuple(sorted(pairs.items())) or None


def number(
    default: float | None,
    check: Callable[[float], bool] | None = None,
    msg: str = "",
    **declared: Any,
) -> Param:
    """A number parameter: ``number(default, range=Range(...), description=...,
    reference=...)`` (``check``/``msg``: the older free-form check).

    >>> p = number(0.5, range=Range(0, 1), description="the weight of recall")
    >>> p.summary("w")
    'w: a number in [0, 1], default 0.5: the weight of recall'
    >>> p.parse("0.25", "w", "f(w=0.25)")
    0.25
    """
    return Param(float, default, check, msg, **declared)


# The built-in families' parameters, each declared once (shared where families share one).
_TREC = "trec_eval 10"
JUDGED_ONLY = Param(
    bool,
    False,
    description="score the ranking with unjudged documents removed (condensed lists)",
    reference="Sakai, SIGIR 2007",
)
"""``judged_only=``, which every family takes (its value read here, never guessed)."""
STRADDLE = Param(
    str,
    "exclude",
    choices=("exclude", "include", "partial"),
    description="at a context budget (@1024tok): the chunk straddling the budget's end is "
    "left out, included whole, or (evidence metrics) kept to the part that fits",
    reference="ranklens, docs/chunking.md",
)
"""``straddle=``, which every family with a cutoff takes at a budget."""
LEVEL = Param(
    int,
    1,
    range=Range(0, None),
    description="the least grade that counts as relevant (trec_eval's -l)",
    reference=_TREC,
)
"""``rel=``, the relevance level of a family that uses one."""
RELATIVE = Param(
    bool,
    False,
    description="ir_measures' SetP(relative=True): trec_eval's set_relative_P",
    reference="ir_measures",
)
IR_BETA = number(
    1.0,
    range=Range(0, None),
    description="ir_measures' SetF(beta=x): trec_eval's set_F with beta = sqrt(x)",
    reference="ir_measures",
)
GAINS = {
    "gains": Param(
        dict,
        None,
        description="the gain of each listed grade; other grades gain their own value",
        reference=f"{_TREC}, ndcg.1=3.5,2=9",
    )
}
GAIN = {
    "gain": Param(
        str,
        None,
        choices=("linear", "exp", "binary"),
        description="gain of grade g: g, 2^g - 1, or 1 when relevant; default: the convention's",
        reference="Järvelin & Kekäläinen 2002; exp: Burges et al. 2005",
    ),
    **GAINS,
}
GRANULAR = {
    "granular": Param(
        bool,
        False,
        description="credit each relevant document retrieved, averaged, not only the first",
        reference="LlamaIndex HitRate/MRR use_granular_*",
    )
}
LEGACY = {
    "legacy": Param(
        bool,
        False,
        description="recall cutoffs as trec_eval 9 and "
        "pytrec_eval: floor(r·R + 0.9), not round(r·R)",
        reference="trec_eval 9.0.8",
    )
}
PERSISTENCE = {
    "p": number(
        0.9,
        range=Range(0, 1, "neither"),
        description="persistence, the chance that a user reads on to the next rank",
        reference="Moffat & Zobel, TOIS 2008",
    )
}
ALPHA = {
    "alpha": number(
        0.5,
        range=Range(0, 1),
        description="redundancy penalty, each repeat of an intent gains 1 - alpha times the last",
        reference="Clarke et al., SIGIR 2008",
    )
}
MULTIPLIER = {
    "m": number(
        None,
        range=Range(0, None),
        description="required: precision at m·R, R the query's relevant documents",
        reference=f"{_TREC}, Rprec_mult",
    )
}
PATIENCE = {
    "beta": number(
        0.5,
        range=Range(0, 1, "right"),
        description="patience, the weight of rank i being beta^(i-1)",
        reference="Clarke, Kolla & Vechtomova, ICTIR 2009",
    )
}
MAX_GRADE = {
    "max": Param(
        int,
        None,
        arg="max_grade",
        range=Range(1, None),
        description="the grade g_max of certain satisfaction, "
        "p_i = (2^g_i - 1) / 2^g_max; default: the qrels' highest",
        reference="Chapelle et al., CIKM 2009; gdeval's 4",
    )
}
F_BETA = {
    "beta": number(
        1.0,
        range=Range(0, None),
        description="recall weighs beta² times precision in F",
        reference=f"van Rijsbergen 1979; {_TREC}, set_F",
    )
}
RECALL_LEVEL = {
    "r": number(
        None,
        range=Range(0, 1),
        description="required: the recall level of the interpolated precision",
        reference=f"{_TREC}, iprec_at_recall",
    )
}
RECALL_LEVELS = {
    "points": Param(
        tuple,
        None,
        description="the recall levels averaged; default 0, 0.1, ..., 1",
        reference=f"{_TREC}, 11pt_avg.0.2,0.5,0.8",
    )
}
_COST = {
    key: number(
        default,
        range=Range(),
        description=f"the value of each {what}",
        reference=f"{_TREC}, utility",
    )
    for key, default, what in (
        ("a", 1.0, "relevant document retrieved"),
        ("b", -1.0, "non-relevant document retrieved"),
        ("c", 0.0, "relevant document missed"),
        ("d", 0.0, "non-relevant document not retrieved"),
    )
}
UTILITY = {
    **_COST,
    "docs": Param(
        int,
        0,
        range=Range(0, None),
        description="the collection size, for the documents not retrieved",
        reference=f"{_TREC}, -N",
    ),
}
