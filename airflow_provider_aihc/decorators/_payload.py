"""What ``@task.aihc_python`` sends with the job: the function's source and its arguments.

Stdlib only; no pickling, so the job's Python need not be the worker's.

* The source is the function's own lines (``inspect``), dedented, with the task decorators
  (``@task.aihc_python``, ``@setup``, ...) blanked out rather than removed: Airflow's
  ``remove_task_decorator`` deletes them and shifts every line, whereas a blank keeps each
  line where it is in the DAG file, so the job's traceback names the DAG file's own lines.
* The arguments are the task's, resolved (XComs pulled, mapped values picked) when the task
  runs; each must be JSON (``None``, ``bool``, ``int``, a finite ``float``, ``str``, lists or
  tuples of them, dicts with ``str`` keys).  Anything else is refused before a request is
  sent, naming the argument, where in it, and the type.
* Both travel in one environment variable, :data:`PAYLOAD_ENV`, as ASCII JSON, at most
  :data:`MAX_PAYLOAD_BYTES`: Linux refuses to start a process any of whose environment
  strings exceeds ``MAX_ARG_STRLEN`` (128 KiB), and the job's spec is also held whole in
  Kubernetes objects; half that limit leaves room for the rest.  No AIHC document states a
  limit of its own for ``envs``.
* Every replica runs :data:`BOOTSTRAP` with ``python3``: it compiles the source with
  postponed annotations (they name the DAG file's imports, absent in the job; defaults are
  evaluated, so they must be literals) and calls the function; rank 0 prints the return value as
  the result marker line, ``AIHC_RESULT <json>``, at most :data:`MAX_RESULT_BYTES` (the
  CRI log format splits longer lines, 16 KiB by default in containerd, which would break
  the marker's JSON).  An exception propagates: Python prints its traceback, exits 1, the
  job fails.
"""

from __future__ import annotations

import ast
import inspect
import json
import math
import os
import shlex
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: The environment variable that carries the payload to the job.
PAYLOAD_ENV = "AIHC_PYTHON_PAYLOAD"
MAX_PAYLOAD_BYTES = 64 * 1024
MAX_RESULT_BYTES = 16 * 1024 - 64
RESULT_MARKER = "AIHC_RESULT "
#: Decorators blanked out of the source (Airflow's ``remove_task_decorator`` list and ours).
TASK_DECORATORS = frozenset(
    {"task", "setup", "teardown", "task.skip_if", "task.run_if", "task.aihc_python",
     "aihc_python_task"}
)  # fmt: skip
PAYLOAD_VERSION = 1

#: What every replica runs (``python3 -c``): stdlib only, for any Python 3 of the image.
BOOTSTRAP = f"""\
import __future__, json, linecache, os, sys, traceback
p = json.loads(os.environ["{PAYLOAD_ENV}"])
src = "\\n" * (p["line"] - 1) + p["source"]
linecache.cache[p["file"]] = (len(src), None, src.splitlines(True), p["file"])
space = {{"__name__": "__aihc_job__"}}
lazy = __future__.annotations.compiler_flag  # annotations name the DAG file's imports
try:  # traceback prints the source lines from linecache (Python's own hook cannot)
    exec(compile(src, p["file"], "exec", flags=lazy, dont_inherit=True), space)
    value = space[p["name"]](*p["args"], **p["kwargs"])
    out = json.dumps(value, allow_nan=False) if os.environ.get("RANK", "0") == "0" else None
    if out is not None and len(out) > {MAX_RESULT_BYTES}:
        raise ValueError("the return value is %d bytes as JSON; at most {MAX_RESULT_BYTES} "
                         "travel back (write larger results to storage)" % len(out))
except Exception:
    traceback.print_exc()
    sys.exit(1)
if out is not None and p["marker"]:
    sys.stdout.flush()
    print(p["marker"] + out, flush=True)
"""


class PayloadError(ValueError):
    """The function or its arguments cannot travel in the job.

    :param problems: ``(what, problem)`` pairs, e.g. ``("argument 'when'", "datetime ...")``.
    """

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"{what}: {problem}" for what, problem in self.problems))


def command() -> str:
    """The command every replica runs."""
    return shlex.join(["python3", "-c", BOOTSTRAP])


def function_source(function: Callable[..., Any]) -> tuple[str, str, int]:
    """``(source, file name, first line)`` of ``function``, task decorators blanked.

    :raises PayloadError: the source cannot be read (a lambda, a function made at runtime).
    """
    name = getattr(function, "__name__", repr(function))
    try:
        lines, first = inspect.getsourcelines(function)
        file = os.path.basename(inspect.getsourcefile(function) or "<dag>")
    except (OSError, TypeError) as err:
        raise PayloadError([(f"function {name!r}", f"its source cannot be read: {err}")]) from err
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise PayloadError([(f"function {name!r}", f"its source does not parse: {err}")]) from err
    node = tree.body[0] if tree.body else None
    if not isinstance(node, ast.FunctionDef) or node.name != name:
        raise PayloadError([(f"function {name!r}", "must be a plain def (not a lambda)")])
    kept = source.splitlines(keepends=True)
    for decorator in node.decorator_list:
        if _dotted(decorator) in TASK_DECORATORS:
            for index in range(decorator.lineno - 1, decorator.end_lineno or decorator.lineno):
                kept[index] = "\n"
    return "".join(kept), file, max(first, 1)


def build(
    function: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    marker: str | None = RESULT_MARKER,
) -> str:
    """The payload (ASCII JSON) of one call of ``function``.

    :param marker: what rank 0 prints before its return value (the operator's
        ``result_marker``); ``None``: the value is not printed.

    :raises PayloadError: naming every argument that is not JSON, or the size.
    """
    problems = []
    names = _positional_names(function, len(args))
    for index, value in enumerate(args):
        problems += _json_problems(f"argument {names[index]!r}", value)
    for key, value in kwargs.items():
        problems += _json_problems(f"argument {key!r}", value)
    if problems:
        raise PayloadError(problems)
    source, file, line = function_source(function)
    payload = json.dumps(
        {
            "v": PAYLOAD_VERSION,
            "name": function.__name__,
            "source": source,
            "file": file,
            "line": line,
            "args": list(args),
            "kwargs": dict(kwargs),
            "marker": marker,
        },
        ensure_ascii=True,
        allow_nan=False,
        separators=(",", ":"),
    )
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise PayloadError(
            [
                (
                    "source and arguments",
                    f"{len(payload)} bytes as JSON, more than the {MAX_PAYLOAD_BYTES} a job's "
                    f"environment variable {PAYLOAD_ENV} carries here (Linux caps one at "
                    "128 KiB); pass large inputs by path (a datasource) instead",
                )
            ]
        )
    return payload


def _json_problems(where: str, value: Any) -> list[tuple[str, str]]:
    """Why ``value`` is not JSON (empty when it is), each naming where and the type."""
    if value is None or isinstance(value, bool | int | str):
        return []
    if isinstance(value, float):
        return [] if math.isfinite(value) else [(where, f"{value!r} is not a JSON number")]
    if isinstance(value, list | tuple):
        found = []
        for index, item in enumerate(value):
            found += _json_problems(f"{where}[{index}]", item)
        return found
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            if not isinstance(key, str):
                found.append((where, f"key {key!r} is a {type(key).__name__}, not a str"))
            else:
                found += _json_problems(f"{where}[{key!r}]", item)
        return found
    kind = f"{type(value).__module__}.{type(value).__qualname__}".removeprefix("builtins.")
    return [
        (
            where,
            f"a {kind} cannot travel as JSON (allowed: None, bool, int, float, str, lists "
            "and dicts of them with str keys); convert it first, e.g. to str",
        )
    ]


def _positional_names(function: Callable[..., Any], count: int) -> list[str]:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        parameters = []
    positional = [
        p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return [positional[i] if i < len(positional) else f"args[{i}]" for i in range(count)]


def _dotted(node: ast.expr) -> str:
    """``task.aihc_python`` of ``@task.aihc_python(...)``; ``""`` for other shapes."""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""
