"""``python -m duckrate.synthetic``: the generators' command line (:mod:`duckrate.synthetic.cli`)."""

from duckrate.synthetic.cli import main

raise SystemExit(main())
