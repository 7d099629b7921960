"""Airflow 2's connection form for the ``aihc`` type, built from ``CONN_FIELDS``
(``get_provider_info.py``); Airflow 3.2+ renders those itself."""

from __future__ import annotations

from typing import Any


def form_field(spec: dict[str, Any]) -> Any:
    """Airflow 2's form field for one ``CONN_FIELDS`` entry.

    Airflow 2 accepts only text, integer, password and boolean fields (any other class
    drops the whole connection type), so an ``enum`` (``region``) is a text field that
    accepts only its values, listed in the description, and a non-integer number a text
    field that accepts only a number; numbers show their default.
    """
    # Only the Airflow 2 UI calls this; its stubs are not in the type-check env.
    from flask_appbuilder.fieldwidgets import (  # type: ignore[import-not-found]
        BS3PasswordFieldWidget,
        BS3TextFieldWidget,
    )
    from flask_babel import lazy_gettext  # type: ignore[import-not-found]
    from wtforms import IntegerField, PasswordField, StringField  # type: ignore[import-untyped]
    from wtforms.validators import (  # type: ignore[import-untyped]
        NumberRange,
        Optional,
        Regexp,
        any_of,
    )

    schema = spec["schema"]
    label, description = lazy_gettext(spec["label"]), spec["description"]
    if schema.get("format") == "password":
        return PasswordField(label, widget=BS3PasswordFieldWidget(), description=description)
    checks: list[Any] = [Optional()]
    field, extra = StringField, {}
    if "enum" in schema:
        checks.append(any_of(schema["enum"]))
        description = f"{description}: {', '.join(schema['enum'])}"
    elif "integer" in schema["type"]:
        field, extra = IntegerField, {"default": schema["default"]}
        checks.append(NumberRange(min=schema["minimum"], max=schema.get("maximum")))
    elif "number" in schema["type"]:
        extra = {"default": str(schema["default"])}
        positive = r"^(?!0*(\.0*)?$)\d+(\.\d+)?$"  # not 0: aiohttp reads 0 as "no timeout"
        checks.append(Regexp(positive, message="a number of seconds > 0"))
    return field(
        label,
        validators=checks,
        widget=BS3TextFieldWidget(),
        description=description,
        **extra,
    )
