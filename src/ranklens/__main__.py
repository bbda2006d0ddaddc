"""``python -m ranklens``: the ``ranklens`` command."""

from ranklens.app.cli import main

raise SystemExit(main())
