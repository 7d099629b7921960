"""The control API (``/_emulator/…``): moved to :mod:`.http.control`.

This path stays importable (docs, deploy, tests and users import it); it re-exports
the public names of the module that holds them now.
"""

from __future__ import annotations

from .http.control import (
    REDACTED as REDACTED,
)
from .http.control import (
    TOKEN_ENV as TOKEN_ENV,
)
from .http.control import (
    TOKEN_HEADER as TOKEN_HEADER,
)
from .http.control import (
    Payload as Payload,
)
from .http.control import (
    control_headers as control_headers,
)
from .http.control import (
    handle_control as handle_control,
)
from .http.control import (
    progression_from_json as progression_from_json,
)
from .http.control import (
    redacted as redacted,
)
from .http.control import (
    refuse_foreign_host as refuse_foreign_host,
)
