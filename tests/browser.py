"""Headless Chromium for the web UI tests: Debian's `chromium` and `chromium-driver` through selenium.

`browser()` yields a driver and always quits it. `open_page` loads a UI route and waits until the page has
rendered (ozone.js marks <main id="main" data-loaded="true" data-page="ROUTE">), failing with any error the
page shows. `screenshot` saves a PNG under test-artifacts/screenshots/ (PYOZONE_ARTIFACTS overrides the
directory) for a human to look at after CI.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("PYOZONE_ARTIFACTS", REPO / "test-artifacts"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
PAGE_TIMEOUT_S = 20.0

needs_chromium = pytest.mark.skipif(
    (CHROMIUM is None or CHROMEDRIVER is None) and not os.environ.get("CI"),
    reason="headless Chromium not installed (apt install chromium chromium-driver; .ci/run does)",
)
"""Outside CI a machine without Chromium skips the browser tests; in CI (.ci/run installs it) they run."""


@contextmanager
def browser(width: int = 1400, height: int = 1000) -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    if CHROMIUM:
        options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(PAGE_TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver, base_url: str, route: str, query: str = "", timeout_s: float = PAGE_TIMEOUT_S) -> float:
    """Loads `base_url/#!/route?query`, waits until it rendered, and returns the seconds it took."""
    from selenium.webdriver.common.by import By

    started = time.monotonic()
    target = f"{base_url}/#!/{route}" + (f"?{query}" if query else "")
    if driver.current_url.split("#")[0].rstrip("/") == base_url.rstrip("/"):
        # The page shown is marked stale first, so a route shown already (another query) is not taken
        # for the new one before it renders.
        driver.execute_script(
            "const m = document.getElementById('main'); if (m) delete m.dataset.loaded;"
            "location.hash = arguments[0]",
            f"#!/{route}" + (f"?{query}" if query else ""),
        )
    else:
        driver.get(target)
    deadline = started + timeout_s
    selector = f'main#main[data-loaded="true"][data-page="{route}"]'
    while True:
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        if found:
            errors = found[0].find_elements(By.CSS_SELECTOR, "p.error")
            assert not errors, f"{route}: the page shows {errors[0].text!r}"
            return time.monotonic() - started
        assert time.monotonic() < deadline, f"{target} did not render within {timeout_s:.0f} s"
        time.sleep(0.05)


def field(driver, name: str) -> str:
    """The text of the value cell marked data-field=NAME on the current page."""
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'main#main [data-field="{name}"]').text


def screenshot(driver, name: str) -> Path:
    path = ARTIFACTS / "screenshots" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
    return path
