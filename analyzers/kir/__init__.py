"""KIR: the small typed IR between the libclang front end and the symbolic engine."""
from .nodes import *  # noqa: F401,F403
from .types import *  # noqa: F401,F403
