"""`python -m pyozone`, the way `pyozone cluster` starts its daemons.

Set up before anything else is imported, so that it also covers a daemon stuck in its imports: a fatal signal
prints every thread's stack, and `kill -QUIT PID` dumps them into the daemon's log without stopping it, as
`kill -3` does for Ozone's JVMs.
"""

import faulthandler
import signal

faulthandler.enable()
faulthandler.register(signal.SIGQUIT, all_threads=True)

from pyozone.cli.main import main  # noqa: E402 - after the handlers above, on purpose

raise SystemExit(main())
