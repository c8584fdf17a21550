"""Every number docs/published.md quotes as the papers' (Marion, Fermanian, Biau & Vert, JMLR 2025;
Cohen, Cont, Rossier & Xu, ICML 2021; Liu & Tindel, Ann. Appl. Probab. 2019), in one table:
``tests/test_published.py`` reads each number of the page's "published" (or "the paper") columns
and finds it here under the page's section, and each entry here on the page, so a misquote is
corrected in this table and the page fails its test until it agrees.

An entry is ``(section, value as printed, what it is)``: ``section`` is the heading of
docs/published.md the number stands under (without its ``## ``)."""

from __future__ import annotations

__all__ = ["PAPER_NUMBERS", "numbers_of"]

#: the heading of the page's index table, one row per figure, table and proposition of the papers
INDEX = "Every figure, table and proposition at a glance"

PAPER_NUMBERS: tuple[tuple[str, str, str], ...] = (
    ("Marion et al., §2: the distributions at criticality", "1.21",
     "first quartile of ||h_L|| / ||h_0||, res-3, d = 100, L = 1000, 10^4 draws (Fig. 2)"),
    ("Marion et al., §2: the distributions at criticality", "1.34", "third quartile of the same (Fig. 2)"),
    ("Marion et al., §2: the distributions at criticality", "0.8657",
     "square root of the lower high-probability bound at d = 100, delta = 1/4 (Proposition 4)"),
    ("Marion et al., §2: the distributions at criticality", "2.0619",
     "square root of the upper high-probability bound at d = 100, delta = 1/4 (Proposition 4)"),
    ("Marion et al., §4: the phase diagram", "0.2", "Table 3: the smallest beta of the phase diagram"),
    ("Marion et al., §4: the phase diagram", "1.3", "Table 3: the largest beta of the phase diagram"),
    ("Marion et al., §4: the phase diagram", "0.05", "the smallest H of the phase diagram"),
    ("Marion et al., §4: the phase diagram", "0.97", "the largest H of the phase diagram"),
    ("Marion et al., §4.2: training from any initialisation", "0.2", "Table 4: the smallest beta of the training grid"),
    ("Marion et al., §4.2: training from any initialisation", "1.3", "Table 4: the largest beta of the training grid"),
    ("Marion et al., §4.2: training from any initialisation", "0.05", "Table 4: the smallest H of the training grid"),
    ("Marion et al., §4.2: training from any initialisation", "0.97", "Table 4: the largest H of the training grid"),
    ("Liu & Tindel: the corrected network at H < 1/2", "0.40", "the strong rate 2H - 1/2 at H = 0.45"),
    ("Liu & Tindel: the corrected network at H < 1/2", "0.30", "the strong rate 2H - 1/2 at H = 0.40"),
    ("Liu & Tindel: the corrected network at H < 1/2", "0.20", "the strong rate 2H - 1/2 at H = 0.35"),
    ("Cohen et al.: the scaling of trained weights", "0.7", "alpha, tanh, synthetic task"),
    ("Cohen et al.: the scaling of trained weights", "0.3", "beta, tanh, synthetic task"),
    ("Cohen et al.: the scaling of trained weights", "0.2",
     "beta, tanh, MNIST; and the smallest exponent of the ReLU increments' growth, L^0.2"),
    ("Cohen et al.: the scaling of trained weights", "0.8", "alpha + beta, ReLU, synthetic task"),
    ("Cohen et al.: the scaling of trained weights", "0.9", "alpha + beta, ReLU, MNIST"),
    ("Cohen et al.: the scaling of trained weights", "0.4", "the largest exponent of the ReLU increments' growth, L^0.4"),
    ("Cohen et al.: the scaling of trained weights", "0.5",
     "the power of L by which the released code's figure scales the ReLU increments"),
    # the index table at the top of the page ("the papers" column)
    (INDEX, "1.21", "first quartile of ||h_L|| / ||h_0|| at criticality (Marion et al., Fig. 2)"),
    (INDEX, "1.34", "third quartile of the same (Marion et al., Fig. 2)"),
    (INDEX, "0.2", "Marion et al., Tables 3 and 4: the smallest beta; Cohen et al.: beta, tanh, embedded MNIST, "
                   "and the smallest exponent of the ReLU increments' growth"),
    (INDEX, "1.3", "Marion et al., Tables 3 and 4: the largest beta"),
    (INDEX, "0.05", "Marion et al., Tables 3 and 4: the smallest H"),
    (INDEX, "0.97", "Marion et al., Tables 3 and 4: the largest H"),
    (INDEX, "0.7", "Cohen et al.: alpha, tanh, synthetic task"),
    (INDEX, "0.3", "Cohen et al.: beta, tanh, synthetic task"),
    (INDEX, "0.8", "Cohen et al.: alpha + beta, ReLU, synthetic task"),
    (INDEX, "0.4", "Cohen et al.: the largest exponent of the ReLU increments' growth"),
    (INDEX, "0.9", "Cohen et al.: alpha + beta, ReLU, embedded MNIST"),
)
"""``(section, value as printed, what it is)`` for every number docs/published.md quotes as the papers'."""


def numbers_of(section: str) -> set[str]:
    """The values :data:`PAPER_NUMBERS` holds under ``section`` (as printed)."""
    return {value for where, value, _ in PAPER_NUMBERS if where == section}
