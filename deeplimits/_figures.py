"""The figure helpers of :mod:`deeplimits.plots` and of every study's plots: a new figure
(outside pyplot when it is only written to a file), its layout estimated without drawing it
twice, and its file. A command's figures cost a small fraction of the command
(benchmarks/RESULTS.md)."""

from __future__ import annotations

import re
import weakref

import numpy as np

from .errors import ParameterError

__all__ = ["DPI", "new_figure", "save_figure", "fast_layout"]

#: the resolution of the figures written (dots per inch); a figure drawn to a file is laid out at it
DPI = 120


def new_figure(nrows, ncols, size, path, ax=None):
    """A new figure with a grid of axes, or the caller's ``ax``: one Axes for a one-panel figure,
    else ``nrows x ncols`` Axes of one figure (any nesting), returned as ``(figure, axes of shape
    (nrows, ncols))``. A figure only written to ``path`` is a bare Agg figure at :data:`DPI`,
    outside pyplot (neither pyplot's import nor its figure manager, and no change of the global
    backend), laid out by :func:`fast_layout` when saved; without ``path`` it is a pyplot figure
    (to show), laid out by matplotlib's ``tight_layout``."""
    if ax is not None:
        axes = np.asarray(ax, dtype=object).reshape(-1)
        if axes.size != nrows * ncols or not all(hasattr(a, "figure") for a in axes):
            want = "a matplotlib Axes" if nrows * ncols == 1 else f"{nrows * ncols} matplotlib Axes"
            raise ParameterError("ax", f"ax must be {want} for this figure ({nrows} x {ncols} panels), got {ax!r:.80}")
        return axes[0].figure, axes.reshape(nrows, ncols)
    if path is not None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        fig = Figure(figsize=size, dpi=DPI)
        FigureCanvasAgg(fig)
        _FAST.add(fig)
        return fig, fig.subplots(nrows, ncols, squeeze=False)
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=size, squeeze=False)


#: the figures :func:`new_figure` made to be written (laid out by :func:`fast_layout`)
_FAST: weakref.WeakSet = weakref.WeakSet()


def save_figure(fig, path, results=()):
    """Lay out and, given ``path``, write the figure (PNG at :data:`DPI`; a pyplot figure is then
    released from pyplot, so a long sweep of figures keeps no memory; the returned figure stays
    usable). A figure :func:`new_figure` made for ``path`` is laid out by :func:`fast_layout`,
    any other by matplotlib's ``tight_layout``. A PNG drawn from ``results`` carries what they
    read as drawn (:mod:`deeplimits._figure_data`)."""
    if fig in _FAST:
        _FAST.discard(fig)
        _light_log_ticks(fig)
        fast_layout(fig)
    else:
        fig.tight_layout()
    if path is not None:
        from ._figure_data import save

        save(fig, path, results, dpi=DPI)
        if getattr(fig.canvas, "manager", None) is not None:  # a pyplot figure (the caller's axes)
            import matplotlib.pyplot as plt

            plt.close(fig)
    return fig


def _light_log_ticks(fig) -> None:
    """Minor ticks of a log axis at 2 and 5 times each power of ten only (matplotlib's default draws
    eight a decade, each tick an object: most of a log-log figure's cost). A log axis of another
    base (depths on base 2) has a major tick at every power and no minor ticks (2 and 5 times a
    power of 2 would be labelled over each other)."""
    from matplotlib.ticker import LogLocator, NullLocator

    for a in fig.axes:
        for axis in (a.xaxis, a.yaxis):
            minor = axis.get_minor_locator()
            if axis.get_scale() == "log" and type(minor) is LogLocator and minor._subs == "auto":
                axis.set_minor_locator(LogLocator(base=minor._base, subs=(2.0, 5.0)) if minor._base == 10
                                       else NullLocator())


def _text_size(text: str, size: float) -> tuple[float, float]:
    """``(width, height)`` in points of ``text`` at font size ``size``, estimated from its
    characters (0.62 em a character, superscripts at 0.7; mathtext markup not counted; 1.25 em a line)."""
    lines = text.split("\n") if text else []
    widest = 0.0
    for line in lines:
        sup = sum(len(m) for m in re.findall(r"\^\{([^}]*)\}", line))
        plain = re.sub(r"\\mathdefault|\\mathrm|[${}^_]", "", line).replace("\\times", " x ")  # spaced
        plain = re.sub(r"\\[a-zA-Z]+", "x", plain)  # a command: one symbol
        widest = max(widest, (len(plain) - 0.3 * sup) * 0.62 * size)
    return widest, 1.25 * size * len(lines)


def _tick_labels(axis) -> list[str]:
    """The labels the axis will draw (major, and minor where its formatter labels them), from its
    locator and formatter: no tick is made."""
    labels = []
    lo, hi = sorted(axis.get_view_interval())
    for which in (axis.major, axis.minor):
        locs = [x for x in np.asarray(which.locator()) if lo - 1e-9 * abs(lo) <= x <= hi + 1e-9 * abs(hi)]
        if locs:
            labels += [t for t in which.formatter.format_ticks(locs) if t]
    return labels


def _tick_size(axis) -> float:
    """The font size of an axis' tick labels, in points."""
    from matplotlib import font_manager, rcParams

    size = axis._major_tick_kw.get("labelsize", rcParams[f"{axis.axis_name}tick.labelsize"])
    return float(font_manager.FontProperties(size=size).get_size_in_points())


def _needs(a) -> dict:
    """The room the texts around the Axes ``a`` need, in points: ``left``, ``right``, ``bottom``, ``top``."""
    from matplotlib import rcParams

    pad = rcParams["xtick.major.size"] + rcParams["xtick.major.pad"] + 2.0
    out = dict(left=4.0, right=8.0, bottom=4.0, top=4.0)
    for axis, near, far in ((a.xaxis, "bottom", "top"), (a.yaxis, "left", "right")):
        if not axis.get_visible():
            continue
        labels, size = _tick_labels(axis), _tick_size(axis)
        extent = [_text_size(t, size) for t in labels]
        room = max((w if near == "left" else h for w, h in extent), default=0.0)
        side = axis.get_ticks_position()
        if room:
            out[far if side == far else near] += room + pad
        label = axis.get_label()
        if label.get_visible() and label.get_text():
            lw, lh = _text_size(label.get_text(), label.get_fontsize())
            out[far if axis.get_label_position() == far else near] += lh + 4.0
    title = max((_text_size(t.get_text(), t.get_fontsize())[1] for t in (a.title, a._left_title, a._right_title)
                 if t.get_text()), default=0.0)
    out["top"] += title + (rcParams["axes.titlepad"] if title else 0.0)
    out["bottom"] += _legend_below(a)
    return out


def _legend_below(a) -> float:
    """The height in points of the legend of ``a`` where it is anchored below the Axes
    (``bbox_to_anchor`` under its bottom edge; 0 for none or one inside): its lines at its font
    size, the spacing between its entries and its border."""
    from matplotlib import rcParams

    leg = a.get_legend()
    if leg is None or not leg.get_visible():
        return 0.0
    anchor = leg.get_bbox_to_anchor().transformed(a.transAxes.inverted())
    if anchor.y1 >= 0:
        return 0.0
    texts = [t.get_text() for t in leg.get_texts()]
    cols = max(1, leg._ncols)
    lines = -(-sum(t.count("\n") + 1 for t in texts) // cols)  # entries fill the columns evenly
    rows = -(-len(texts) // cols)
    return (1.25 * lines + rcParams["legend.labelspacing"] * max(0, rows - 1)
            + 2 * (rcParams["legend.borderpad"] + rcParams["legend.borderaxespad"])) * leg.prop.get_size_in_points()


def fast_layout(fig) -> None:
    """Margins and gaps of a figure's grid of Axes from the room their texts need (titles, axis
    labels, tick labels as their locators and formatters give them, a colorbar's ticks and label,
    the figure's title), estimated from the texts' characters: what ``tight_layout`` decides,
    without drawing the figure to measure it (which costs about as much as drawing it again)."""
    grid = [a for a in fig.axes if a.get_subplotspec() is not None and not hasattr(a, "_colorbar")]
    if not grid:
        return
    nrows, ncols = grid[0].get_subplotspec().get_topmost_subplotspec().get_gridspec().get_geometry()
    need = [_needs(a) for a in fig.axes if a in grid or hasattr(a, "_colorbar")]
    W, H = 72.0 * fig.get_figwidth(), 72.0 * fig.get_figheight()
    left, right = max(n["left"] for n in need), max(n["right"] for n in need)
    bottom, top = max(n["bottom"] for n in need), max(n["top"] for n in need)
    head = top
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text():  # the figure's title, drawn from 0.98 of the height down
        head += _text_size(sup.get_text(), sup.get_fontsize())[1] + 0.02 * H + 2.0
    l, r = min(0.4, left / W), 1.0 - min(0.4, right / W)
    b, t = min(0.4, bottom / H), 1.0 - min(0.45, head / H)
    gap_w, gap_h = left + right, top + bottom
    aw = max(1.0, ((r - l) * W - (ncols - 1) * gap_w) / ncols)
    ah = max(1.0, ((t - b) * H - (nrows - 1) * gap_h) / nrows)
    fig.subplots_adjust(left=l, right=r, bottom=b, top=t, wspace=gap_w / aw, hspace=gap_h / ah)
