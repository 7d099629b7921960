"""Scenario 6: the UI in a real browser (Playwright driving Debian's Chromium).

Playwright's own browser download does not work here, so it launches ``/usr/bin/chromium``.
Every step saves a screenshot under ``<build>/screenshots``; a step that cannot find what it
looks for fails with that screenshot's path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playwright.sync_api import Page, sync_playwright
from services import RUN_MARKER

if TYPE_CHECKING:
    from report import Table
    from scenarios import Deployment

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
UI_CONNECTION_ID = "aihc_from_the_ui"
#: Runs whose ``train`` task created a job; the newest successful one is opened.
#: A DAG whose ``train`` task's job is still there, Succeeded, when the UI scenario runs
#: (scenario 4 clears it; ``aihc_cleanup`` deletes its job, so its page would not show one).
RUNS_WITH_TRAIN = ("deploy_clear",)


def check_ui(d: Deployment, table: Table) -> None:
    """Log in, check the connection form, follow a task's "AIHC Job" link."""
    shots = d.build / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        env: dict[str, str | float | bool] = {**os.environ, RUN_MARKER: str(d.build)}
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, env=env)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(30_000)

            def step(name: str, shot: str, body: Callable[[], str]) -> None:
                table.check(name, lambda: _screenshotted(page, shots / f"{shot}.png", body))

            step("6 log in to the UI", "1-login", lambda: _log_in(page, d))
            step(
                "6 Admin → Connections → add: Baidu AIHC fields",
                "2-connection-saved",
                lambda: _connection_form(page, d, shots / "2-connection-form.png"),
            )
            step(
                "6 a finished train task's AIHC Job link",
                "3-task",
                lambda: _job_link(page, d, shots),
            )
        finally:
            browser.close()


def _screenshotted(page: Page, path: Path, body: Callable[[], str]) -> str:
    """Run a step; screenshot the page after it, and name the screenshot when it fails."""
    try:
        detail = body()
    except Exception as exc:
        page.screenshot(path=str(path.with_name(path.stem + "-FAILED.png")), full_page=True)
        raise AssertionError(
            f"{exc} (screenshot: {path.with_name(path.stem + '-FAILED.png')})"
        ) from exc
    page.screenshot(path=str(path), full_page=True)
    return f"{detail} (screenshot: {path})"


def _log_in(page: Page, d: Deployment) -> str:
    page.goto(d.airflow.base_url + "/")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill(d.airflow.password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Admin").wait_for()
    return "signed in as admin"


def _connection_form(page: Page, d: Deployment, form_shot: Path) -> str:
    page.get_by_role("button", name="Admin").click()
    page.get_by_role("menuitem", name="Connections").click()
    page.get_by_role("button", name="Add Connection").click()
    page.get_by_label("Connection ID").fill(UI_CONNECTION_ID)
    page.get_by_label("Connection Type").fill("Baidu AIHC")
    page.keyboard.press("Enter")
    _expect_type(page, "input[name=password]", "password", "Secret Access Key")
    page.get_by_label("Endpoint", exact=True).fill(d.emulator.base_url)
    page.get_by_label("Access Key ID", exact=True).fill("ui-access-key")
    page.get_by_label("Secret Access Key", exact=True).fill("ui-secret-key")
    page.get_by_role("button", name="Extra Fields", exact=True).click()
    page.locator("#element_resource_pool_id").fill("cce-fromtheui")
    _expect_type(page, "#element_security_token", "password", "STS security token")
    page.screenshot(path=str(form_shot), full_page=True)
    problems = []
    if not _is_dropdown(page, "#element_region", "Region"):
        problems.append(f"Region is a free-text field, not a drop-down of regions ({form_shot})")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("dialog").wait_for(state="hidden")
    saved = d.airflow.call("GET", f"/connections/{UI_CONNECTION_ID}")
    if saved["conn_type"] != "aihc" or "cce-fromtheui" not in (saved.get("extra") or ""):
        problems.append(f"the saved connection is not what the form said: {saved}")
    if problems:
        raise AssertionError("; ".join(problems))
    return "endpoint, access key id, masked secret, region drop-down, pool, masked STS token; saved"


def _is_dropdown(page: Page, selector: str, label: str) -> bool:
    """Whether the field is a ``<select>`` or a combobox (Airflow renders enums as one)."""
    field = page.locator(selector)
    if field.count():
        kind = field.evaluate("e => e.tagName === 'SELECT' ? 'combobox' : e.getAttribute('role')")
        if kind == "combobox":
            return True
    selects = page.locator(f"select[id*={label.lower()}], select[name*={label.lower()}]").count()
    return bool(selects or page.get_by_role("combobox", name=re.compile(label)).count())


def _expect_type(page: Page, selector: str, wanted: str, label: str) -> None:
    actual = page.locator(selector).get_attribute("type")
    if actual != wanted:
        raise AssertionError(f"{label} is an input of type {actual!r}, not {wanted!r} (masked)")


def _job_link(page: Page, d: Deployment, shots: Path) -> str:
    dag_id, run = _finished_run(d)
    url = f"{d.airflow.base_url}/dags/{dag_id}/runs/{run}/tasks/train"  # the UI's task page
    expected = d.airflow.call("GET", f"/dags/{dag_id}/dagRuns/{run}/taskInstances/train/links")
    target = expected["extra_links"].get("AIHC Job")
    page.goto(url)
    page.get_by_role("link", name="Details", exact=True).click()
    link = page.get_by_role("link", name="AIHC Job", exact=True)
    link.wait_for()
    page.screenshot(path=str(shots / "3-task.png"), full_page=True)
    if link.get_attribute("target") == "_blank":
        with page.context.expect_page() as opened:
            link.click()
        job_page = opened.value
    else:
        job_page = page.context.new_page()
        link.click()
        job_page.goto(page.url)
    job_page.wait_for_load_state()
    job_page.screenshot(path=str(shots / "4-aihc-job-page.png"), full_page=True)
    job_id = str(target).rsplit("/", 1)[-1]
    text = job_page.locator("body").inner_text()
    opened_url = job_page.url
    job_page.close()
    if opened_url != target or job_id not in text or "Succeeded" not in text:
        raise AssertionError(
            f"the link opened {opened_url}, expected {target} showing a Succeeded job"
        )
    return f"{dag_id}/{run}: AIHC Job → {target} (Succeeded)"


def _finished_run(d: Deployment) -> tuple[str, str]:
    for dag_id in RUNS_WITH_TRAIN:
        params: dict[str, Any] = {"state": "success", "order_by": "-end_date", "limit": 1}
        runs = d.airflow.call("GET", f"/dags/{dag_id}/dagRuns", params=params)["dag_runs"]
        if runs:
            return dag_id, str(runs[0]["dag_run_id"])
    raise AssertionError(f"no successful run of {', '.join(RUNS_WITH_TRAIN)} to open")
