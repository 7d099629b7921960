"""Task callbacks that record how every try ended, for the reliability driver.

Each try appends one JSON line to the file named by ``AIHC_REL_EVENTS`` (nothing when it
is unset): the outcome, the try number, and for a failure the exception's class, its
bases, its text and its ``repr``, so the tests can tell a clear AIHC error from a bug.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

EVENTS_ENV = "AIHC_REL_EVENTS"


def _recorder(outcome: str) -> Callable[[Any], None]:
    def record(context: Any) -> None:
        path = os.environ.get(EVENTS_ENV)
        if not path:
            return
        ti = context["ti"]
        error = context.get("exception")
        line: dict[str, Any] = {
            "outcome": outcome,
            "dag_id": ti.dag_id,
            "task_id": ti.task_id,
            "run_id": ti.run_id,
            "try_number": ti.try_number,
        }
        if error is not None:
            line.update(
                error_type=type(error).__name__,
                error_bases=[cls.__name__ for cls in type(error).__mro__],
                error=str(error),
                error_repr=repr(error),
            )
        if outcome == "success":
            line["xcom"] = ti.xcom_pull(task_ids=ti.task_id)
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line, default=str) + "\n")

    return record


CALLBACKS = {
    "on_success_callback": _recorder("success"),
    "on_retry_callback": _recorder("retry"),
    "on_failure_callback": _recorder("failure"),
}
