"""Jobs and how they move: moved to :mod:`.state.jobs`.

This path stays importable (docs, deploy, tests and users import it); it re-exports
the public names of the module that holds them now.
"""

from __future__ import annotations

from .state.jobs import (
    ACTIVE as ACTIVE,
)
from .state.jobs import (
    CHAIN as CHAIN,
)
from .state.jobs import (
    CREATED as CREATED,
)
from .state.jobs import (
    FAILED as FAILED,
)
from .state.jobs import (
    MANUAL_TERMINATION as MANUAL_TERMINATION,
)
from .state.jobs import (
    PRIORITIES as PRIORITIES,
)
from .state.jobs import (
    RUNNING as RUNNING,
)
from .state.jobs import (
    SCHEDULED as SCHEDULED,
)
from .state.jobs import (
    STOP_REASON as STOP_REASON,
)
from .state.jobs import (
    STOPPED as STOPPED,
)
from .state.jobs import (
    SUCCEEDED as SUCCEEDED,
)
from .state.jobs import (
    TERMINAL as TERMINAL,
)
from .state.jobs import (
    Clock as Clock,
)
from .state.jobs import (
    Job as Job,
)
from .state.jobs import (
    JobFilter as JobFilter,
)
from .state.jobs import (
    JobRequest as JobRequest,
)
from .state.jobs import (
    Plan as Plan,
)
from .state.jobs import (
    Progression as Progression,
)
from .state.jobs import (
    Runner as Runner,
)
from .state.jobs import (
    enter as enter,
)
from .state.jobs import (
    force as force,
)
from .state.jobs import (
    next_status as next_status,
)
from .state.jobs import (
    poll as poll,
)
from .state.jobs import (
    settle as settle,
)
from .state.jobs import (
    stop as stop,
)
