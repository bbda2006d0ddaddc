"""``python -m ranklens.declared > docs/parameters.md``: the parameter reference."""

import sys

from ranklens.declared import load_all, reference

load_all()
sys.stdout.write(reference())
