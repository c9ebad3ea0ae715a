from rnnsearch.cli import main

raise SystemExit(main())
