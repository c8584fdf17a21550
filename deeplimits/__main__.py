"""``python -m deeplimits``: the ``deeplimits`` command."""

import sys

from .cli import main

sys.exit(main())
