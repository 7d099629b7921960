"""Faults and job scripts: moved to :mod:`.steering.scenarios`.

This path stays importable (docs, deploy, tests and users import it); it re-exports
the public names of the module that holds them now.
"""

from __future__ import annotations

from .steering.scenarios import (
    FAULT_KINDS as FAULT_KINDS,
)
from .steering.scenarios import (
    PRE_FAULTS as PRE_FAULTS,
)
from .steering.scenarios import (
    SCRIPT_KINDS as SCRIPT_KINDS,
)
from .steering.scenarios import (
    THROTTLE_CODE as THROTTLE_CODE,
)
from .steering.scenarios import (
    FailJob as FailJob,
)
from .steering.scenarios import (
    Fault as Fault,
)
from .steering.scenarios import (
    FaultKind as FaultKind,
)
from .steering.scenarios import (
    ForceStatus as ForceStatus,
)
from .steering.scenarios import (
    HoldJob as HoldJob,
)
from .steering.scenarios import (
    Output as Output,
)
from .steering.scenarios import (
    Queue as Queue,
)
from .steering.scenarios import (
    QueueFor as QueueFor,
)
from .steering.scenarios import (
    Script as Script,
)
from .steering.scenarios import (
    delay as delay,
)
from .steering.scenarios import (
    drop_after as drop_after,
)
from .steering.scenarios import (
    drop_before as drop_before,
)
from .steering.scenarios import (
    error as error,
)
from .steering.scenarios import (
    fault_from_json as fault_from_json,
)
from .steering.scenarios import (
    malformed as malformed,
)
from .steering.scenarios import (
    passthrough as passthrough,
)
from .steering.scenarios import (
    random_schedule as random_schedule,
)
from .steering.scenarios import (
    script_from_json as script_from_json,
)
from .steering.scenarios import (
    throttle as throttle,
)
