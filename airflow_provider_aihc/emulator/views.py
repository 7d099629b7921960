"""Wire shapes of a job, pods and labels: moved to :mod:`.dialects.v1.render` (v1's JobInfo,
pods), :mod:`.state.pods` (pods, nodes, labels) and :mod:`.dialects.common` (times).

This path stays importable (tests import it); it re-exports the names that kept their
meaning.  Events are now domain objects (:mod:`.state.events`) rendered by each dialect.
"""

from __future__ import annotations

from .backend import job_state as job_state
from .dialects.common import event_time as event_time
from .dialects.common import iso as iso
from .dialects.v1.render import job_info as job_info
from .dialects.v1.render import pod_info as pod_info
from .state.pods import (
    JOB_NAME_LABEL as JOB_NAME_LABEL,
)
from .state.pods import (
    NAMESPACE as NAMESPACE,
)
from .state.pods import (
    PLATFORM_LABEL_PREFIX as PLATFORM_LABEL_PREFIX,
)
from .state.pods import (
    PodRef as PodRef,
)
from .state.pods import (
    all_labels as all_labels,
)
from .state.pods import (
    find_pod as find_pod,
)
from .state.pods import (
    node_name as node_name,
)
from .state.pods import (
    pod_context as pod_context,
)
from .state.pods import (
    pod_ip as pod_ip,
)
from .state.pods import (
    pods_of as pods_of,
)
from .state.pods import (
    user_id as user_id,
)
