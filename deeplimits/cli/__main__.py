"""``python -m deeplimits.cli``: the ``deeplimits`` command (as ``python -m deeplimits``)."""

import sys

from . import main

sys.exit(main())
