"""Strong orders of convergence: what a pair (or a scheme) declares of its error against depth
(docs/mathematics.md, "The implemented regimes" and "Error expansions"). Torch-free, below the
pairs and the regimes.

An order is the leading term of a short error expansion ``e(L) ~ sum_i c_i L^-r_i (log L)^p_i``
with non-negative coefficients; :attr:`StrongOrder.expansion` lists its terms, the leading one
first, and :mod:`deeplimits.studies.expansion_fit` fits them to a measured error table.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from .errors import ParameterError

__all__ = ["StrongOrder", "Term", "KINDS", "expected_constant"]

#: how a term behaves against a nested reference, the scheme on a finer grid ``N`` of the same path
#: (docs/mathematics.md, "Error expansions"): a ``coherent`` term is a pathwise limit (``L^r e_L ->
#: Z`` in probability), so the reference's own error is subtracted; a ``fluctuation`` is a
#: martingale whose finer-grid part is its projection (a central limit theorem, Kurtz & Protter
#: 1991), so the variances subtract; a ``mixed`` term (the default: most terms of a scheme's error
#: hold both, e.g. Euler-Maruyama's drift error ``int (W_s - W_k/L) ds`` has correlation 3/4 with its
#: finer-grid version) is seen anywhere between the two, and the test takes the mix that fits best;
#: an ``unshared`` term is one the reference's scheme does not have (the plain Euler network's bias
#: against a modified-Euler reference), seen whole; a ``partial`` term is a fluctuation the reference
#: holds only part of: its own error is correlated with the scheme's by a share ``rho`` in [0, 1] of
#: its variance (1: a fluctuation; 0: independent, the reference's error adds), which the test takes
#: as it fits best (fBm increments with H < 1/2: the covariances of a block's fine increments with
#: the block nearly cancel, so the centred squares of the fine and coarse grids are nearly
#: uncorrelated; docs/mathematics.md, "Rough weights")
KINDS = ("coherent", "fluctuation", "mixed", "unshared", "partial")
#: the range of a declared strong order's exponent (an order above 8 is no scheme's, and a negative
#: one is no convergence: the verdicts' fits are built for orders in this range)
RATE_RANGE = (0.0, 8.0)
#: the range of the exponent of any term of an expansion, and of its log power (a leading term's log
#: power is not negative: the order's ``log_power``; a later term's may be, ``L^-1 (log L)^-1/2``)
TERM_RANGE, LOG_POWER_RANGE, TERM_LOG_POWER_RANGE = (-16.0, 16.0), (0.0, 4.0), (-4.0, 4.0)


def _within(name: str, value, bounds, what: str) -> float:
    lo, hi = bounds
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not lo <= value <= hi:
        raise ParameterError(name, f"{name} must be a number in [{lo:g}, {hi:g}] ({what}), got {value!r:.40}")
    return float(value)


def power_text(exponent: float, log_power: float = 0.0) -> str:
    """``L^-1/2``, ``L^-1 sqrt(log L)``, ``L^0``: a term's law in words."""
    r = _fraction(exponent)
    log = "" if not log_power else " sqrt(log L)" if log_power == 0.5 else f" (log L)^{_fraction(log_power)}"
    if exponent == 0:
        return f"L^0{log}"
    return f"L^-{r}{log}" if exponent > 0 else f"L^{-exponent:g}{log}"


def _fraction(x: float) -> str:
    """``1/2``, ``3``, ``0.7``, ``-1/2``: a number as a fraction of denominator at most 8 when it is one."""
    f = Fraction(abs(x)).limit_denominator(8)
    text = f"{f.numerator}/{f.denominator}" if abs(float(f) - abs(x)) < 1e-9 and f.denominator > 1 else f"{abs(x):g}"
    return "-" + text if x < 0 else text


@dataclasses.dataclass(frozen=True)
class Term:
    """One term ``c L^-exponent (log L)^log_power`` of a strong-error expansion.

    ``kind`` (:data:`KINDS`) says how the term is seen against a nested reference of grid ``N``
    (with ``f = f(L)``, ``g = f(N)``): ``coherent``: ``f - g``; ``fluctuation``: ``sqrt(f^2 - g^2)``;
    ``mixed``: ``sqrt(f^2 + g^2 - 2 g (m f + (1 - m) g))`` for a mix ``m`` in [0, 1] (1 coherent,
    0 fluctuation) that the fit chooses; ``partial``: ``sqrt(f^2 + g^2 - 2 m g^2)`` for a share ``m``
    in [0, 1] (1 a fluctuation, 0 independent) that the fit chooses; ``unshared``, or a term that
    does not decay (``exponent <= 0``): ``f``. Against an exact reference every term is seen whole.
    """

    exponent: float
    """The exponent of ``L^-exponent``."""
    log_power: float = 0.0
    """The power of the factor ``(log L)^log_power`` (0: none)."""
    kind: str = "mixed"
    """How the term is seen against a nested reference (:data:`KINDS`; ``mixed`` when not known)."""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError("kind", f"kind must be one of {', '.join(map(repr, KINDS))}, got {self.kind!r}")
        _within("exponent", self.exponent, TERM_RANGE, "the exponent of a term L^-exponent")
        _within("log_power", self.log_power, TERM_LOG_POWER_RANGE, "the power of a term's log L factor")

    def law(self, depth: float) -> float:
        """``L^-exponent (log L)^log_power`` (``inf`` at ``L <= 1`` for a negative log power)."""
        if not self.log_power:
            return depth ** -self.exponent
        log = math.log(depth)
        if log <= 0 and self.log_power < 0:
            return math.inf
        return depth ** -self.exponent * log ** self.log_power

    def seen(self, depth: float, reference: float | None = None, mix: float = 1.0) -> float:
        """The term's size at ``depth`` against a nested reference on the grid ``reference``
        (``None``: an exact or adaptive reference); ``mix`` in [0, 1] is a ``mixed`` term's share
        of coherence, a ``partial`` term's shared variance (see the class docstring)."""
        f = self.law(depth)
        if reference is None or self.exponent <= 0 or self.kind == "unshared":
            return f
        g = self.law(reference)
        if self.kind == "coherent":
            return f - g
        if self.kind == "partial":
            return math.sqrt(max(f * f + g * g - 2 * mix * g * g, 0.0))
        m = 0.0 if self.kind == "fluctuation" else mix
        return math.sqrt(max(f * f + g * g - 2 * g * (m * f + (1 - m) * g), 0.0))

    @property
    def text(self) -> str:
        """The term as text, ``L^-1/2`` or ``L^-1 sqrt(log L)``."""
        return power_text(self.exponent, self.log_power)

    def slope(self, depths) -> float:
        """The least-squares slope of ``-log f(L)`` against ``log L`` over ``depths`` (``exponent``
        without a log factor)."""
        if not self.log_power or len(depths) < 2:
            return self.exponent
        x = [math.log(L) for L in depths]
        y = [math.log(math.log(L)) for L in depths]
        mx, my = sum(x) / len(x), sum(y) / len(y)
        b = sum((a - mx) * (c - my) for a, c in zip(x, y)) / sum((a - mx) ** 2 for a in x)
        return self.exponent - self.log_power * b


@dataclasses.dataclass(frozen=True)
class StrongOrder:
    """The theoretical strong error ``E max_k ||H_{k/L} - h_k|| ~ L^-rate (log L)^log_power``.

    Attributes:
        rate: the exponent of ``L``.
        condition: when the order holds (e.g. ``"H in (1/2, 1)"``).
        note: where it comes from and what to expect at practical depths (printed in reports).
        log_power: the power of the logarithmic factor (``0.5`` for ``sqrt(log L)``), 0 without one.
        kind: how the leading term is seen against a nested reference (:data:`KINDS`; ``mixed``
            when not known).
        next_terms: the next terms of the expansion that theory knows of (:class:`Term`), each
            decaying faster than the leading one; empty: the leading term alone.
        remainder: the first term the expansion leaves out (:class:`Term`, decaying faster than
            the leading one; it may lie between declared ones); ``None``: the last declared
            exponent plus 1/2, the step of a strong error's series in powers of ``L^-1/2``
            (:attr:`omitted`). A table that fits only with it reads ``pre-asymptotic``.
        constant: where the error's limit law is known, ``lim L^rate (log L)^-log_power
            E|H_1 - h_L|`` against the exact limit (docs/mathematics.md, "Error constants");
            ``None`` otherwise. ``constant_next``: ``((c, e), ...)``, the constant corrected by the
            next terms, ``constant (1 + sum c L^-e)``; ``constant_source``: where it comes from.
    """

    rate: float
    """The exponent of ``L``."""
    condition: str
    """When the order holds (e.g. ``"H in (1/2, 1)"``)."""
    note: str
    """Where it comes from and what to expect at practical depths (printed in reports)."""
    log_power: float = 0.0
    """The power of the logarithmic factor (``0.5`` for ``sqrt(log L)``), 0 without one."""
    kind: str = "mixed"
    """How the leading term is seen against a nested reference (:data:`KINDS`; ``mixed`` when not known)."""
    next_terms: tuple = ()
    """The next terms of the expansion theory knows of (:class:`Term`), each decaying faster."""
    constant: float | None = None
    """``lim L^rate (log L)^-log_power E|H_1 - h_L|`` where the error's limit law is known."""
    constant_next: tuple = ()
    """``((c, e), ...)``: the constant corrected by the next terms, ``constant (1 + sum c L^-e)``."""
    constant_source: str = ""
    """Where the constant comes from."""
    remainder: Term | None = None
    """The first term the expansion leaves out (``None``: the last declared exponent plus 1/2)."""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ParameterError("kind", f"kind must be one of {', '.join(map(repr, KINDS))}, got {self.kind!r}")
        _within("rate", self.rate, RATE_RANGE, "a strong order's exponent of L")
        _within("log_power", self.log_power, LOG_POWER_RANGE, "the power of the log L factor")
        lead = self.leading
        for t in self.next_terms:
            if not isinstance(t, Term):
                raise ParameterError("next_terms", f"next_terms must be deeplimits.orders.Term objects, got {t!r}")
            if (t.exponent, -t.log_power) <= (lead.exponent, -lead.log_power):
                raise ParameterError("next_terms", f"next_terms: {t.text} must decay faster than the leading term {lead.text}")
        if self.remainder is not None:
            r = self.remainder
            if not isinstance(r, Term) or (r.exponent, -r.log_power) <= (lead.exponent, -lead.log_power) or \
                    any((r.exponent, r.log_power) == (t.exponent, t.log_power) for t in self.expansion):
                raise ParameterError("remainder", f"remainder must be a deeplimits.orders.Term decaying faster than the "
                                                  f"leading term {lead.text}, not one of the declared terms, got {r!r}")

    def to_dict(self) -> dict:
        """Plain JSON (its terms as dicts, ``constant_next`` as lists): what a stored run keeps of
        the order it was read with."""
        d = dataclasses.asdict(self)
        d["next_terms"], d["constant_next"] = list(d["next_terms"]), [list(x) for x in next_pairs(self.constant_next)]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "StrongOrder":
        """The order of :meth:`to_dict`'s JSON."""
        d = dict(d)
        d["next_terms"] = tuple(Term(**t) for t in d.get("next_terms", ()))
        d["constant_next"] = tuple(tuple(x) for x in d.get("constant_next", ()))
        d["remainder"] = None if d.get("remainder") is None else Term(**d["remainder"])
        return cls(**d)

    @classmethod
    def of(cls, terms, condition: str, note: str, remainder: Term | None = None) -> "StrongOrder":
        """The order whose expansion is ``terms`` (:class:`Term` objects in any order): the
        slowest-decaying term leads; terms of one law are merged (of one kind, it stays; of two,
        the merged term is ``mixed``)."""
        laws: dict = {}
        for t in terms:
            key = (t.exponent, t.log_power)
            laws[key] = t.kind if laws.get(key, t.kind) == t.kind else "mixed"
        kept = [Term(r, p, k) for (r, p), k in sorted(laws.items(), key=lambda x: (x[0][0], -x[0][1]))]
        lead = kept[0]
        return cls(lead.exponent, condition, note, lead.log_power, lead.kind, tuple(kept[1:]), remainder=remainder)

    @property
    def leading(self) -> Term:
        """The leading term ``L^-rate (log L)^log_power``."""
        return Term(self.rate, self.log_power, self.kind)

    @property
    def expansion(self) -> tuple:
        """The declared terms, the leading one first."""
        return (self.leading, *self.next_terms)

    @property
    def omitted(self) -> Term:
        """The first term the expansion leaves out: :attr:`remainder`, or the last declared
        exponent plus 1/2 (``mixed``)."""
        return self.remainder or Term(max(t.exponent for t in self.expansion) + 0.5)

    @property
    def expansion_text(self) -> str:
        """``a L^-1/2 + b L^-1``."""
        return " + ".join(f"{c} {t.text}" for c, t in zip("abcdefgh", self.expansion))

    def slope(self, depths) -> float:
        """The least-squares slope of ``-log(L^-rate (log L)^log_power)`` against ``log L`` over
        ``depths``: what a fit over these depths should find (``rate`` without a log factor)."""
        return self.leading.slope(depths)


def expected_constant(constant: float, leading: Term, depth: int, reference: int | None = None,
                      constant_next: tuple = ()) -> float:
    """What ``L^r (log L)^-p E|H_1 - h_L|`` should be at ``depth``: the ``constant``, corrected by
    the next terms ``((c, e), ...)`` (``1 + sum c L^-e``; a single flat ``(c, e)``, as results
    stored before several were declared hold, is one term) and by the nested ``reference`` as the
    leading term is seen against it (``Term.seen / Term.law``: ``sqrt(1 - (L/N)^2r)`` for a
    fluctuation)."""
    factor = leading.seen(depth, reference) / leading.law(depth) if leading.law(depth) else 1.0
    pairs = next_pairs(constant_next)
    return constant * (1 + sum(c * depth ** -e for c, e in pairs)) * factor


def next_pairs(constant_next) -> tuple:
    """``constant_next`` as pairs ``((c, e), ...)`` (a flat ``(c, e)`` is one pair)."""
    items = tuple(constant_next or ())
    if len(items) == 2 and all(isinstance(x, (int, float)) for x in items):
        return (tuple(items),)
    return tuple(tuple(p) for p in items)
