"""The request and response types: moved to :mod:`.http.wire`.

This path stays importable (tests import it); it re-exports the public names of the
module that holds them now.
"""

from __future__ import annotations

from .http.wire import (
    JSON_TYPE as JSON_TYPE,
)
from .http.wire import (
    Request as Request,
)
from .http.wire import (
    Response as Response,
)
from .http.wire import (
    error_response as error_response,
)
from .http.wire import (
    json_response as json_response,
)
