"""What the studies share, in one place with public names (docs/adding-a-study.md): a study imports
these, never a sibling study's private functions (tests/test_layout.py checks it).

* :mod:`~deeplimits.studies._shared.stats`: medians of finite numbers and per-depth records, a
  log-log slope with its interval;
* :mod:`~deeplimits.studies._shared.conv`: the floating-point operations of a convolutional pass
  and their rate, a plan read at one depth by a memory model, one thread for small activations;
* :mod:`~deeplimits.studies._shared.families`: a family of depths trained from one driver sample
  and measured against a reference (the trained-limit study, the limit beside the transfer study).

The figure helpers every study's plots use are :func:`deeplimits.plots.new_figure` and
:func:`deeplimits.plots.save_figure`.
"""
