from pyozone.cli.main import main

raise SystemExit(main())
