"""SCM high availability, the sans-IO half: what the SCM core asks about leadership (ScmContext)."""

from pyozone.scm.ha.context import ScmContext

__all__ = ["ScmContext"]
