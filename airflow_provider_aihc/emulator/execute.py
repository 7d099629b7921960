"""Jobs run as local processes (``--execute``): moved to :mod:`.state.execute`.

This path stays importable (docs, deploy, tests and users import it); it re-exports
the public names of the module that holds them now.
"""

from __future__ import annotations

from .state.execute import (
    DRAIN_SECONDS as DRAIN_SECONDS,
)
from .state.execute import (
    INHERITED_ENV as INHERITED_ENV,
)
from .state.execute import (
    JOB_MARKER_ENV as JOB_MARKER_ENV,
)
from .state.execute import (
    MAX_LINE_BYTES as MAX_LINE_BYTES,
)
from .state.execute import (
    MAX_LINES_PER_POD as MAX_LINES_PER_POD,
)
from .state.execute import (
    NOTE as NOTE,
)
from .state.execute import (
    OUTPUT as OUTPUT,
)
from .state.execute import (
    POLL_SECONDS as POLL_SECONDS,
)
from .state.execute import (
    STOP_GRACE_SECONDS as STOP_GRACE_SECONDS,
)
from .state.execute import (
    ExecuteSettings as ExecuteSettings,
)
from .state.execute import (
    Executor as Executor,
)
from .state.execute import (
    JobRun as JobRun,
)
from .state.execute import (
    live_processes as live_processes,
)
