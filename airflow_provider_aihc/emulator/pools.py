"""Resource pools and queues: moved to :mod:`.state.pools`.

This path stays importable (tests import it); it re-exports the public names of the
module that holds them now.
"""

from __future__ import annotations

from .state.pools import (
    CREATED_AT as CREATED_AT,
)
from .state.pools import (
    DEFAULT_GPU as DEFAULT_GPU,
)
from .state.pools import (
    DEFAULT_RESOURCE_POOL_NAME as DEFAULT_RESOURCE_POOL_NAME,
)
from .state.pools import (
    K8S_VERSION as K8S_VERSION,
)
from .state.pools import (
    PARENT_QUEUE as PARENT_QUEUE,
)
from .state.pools import (
    POOL_DESCRIPTION as POOL_DESCRIPTION,
)
from .state.pools import (
    POOL_PHASE as POOL_PHASE,
)
from .state.pools import (
    PREEMPTABLE as PREEMPTABLE,
)
from .state.pools import (
    QUEUE_BASE as QUEUE_BASE,
)
from .state.pools import (
    QUEUE_STATE as QUEUE_STATE,
)
from .state.pools import (
    QUEUE_TYPE as QUEUE_TYPE,
)
from .state.pools import (
    RECLAIMABLE as RECLAIMABLE,
)
from .state.pools import (
    SERVERLESS_POOL_ID as SERVERLESS_POOL_ID,
)
from .state.pools import (
    Pool as Pool,
)
from .state.pools import (
    PoolUsage as PoolUsage,
)
from .state.pools import (
    Queue as Queue,
)
from .state.pools import (
    allocated as allocated,
)
from .state.pools import (
    capability as capability,
)
from .state.pools import (
    default_pools as default_pools,
)
from .state.pools import (
    usage as usage,
)
