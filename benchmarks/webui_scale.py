"""SCM's web UI at scale: `pyozone sim --serve` with 5,000 datanodes and 1M containers, every page rendered
in headless Chromium, against a baseline measured in the same run (5 datanodes, 1,000 containers).

For each cluster a `pyozone sim --containers N --serve 127.0.0.1:0 --serve-for S` subprocess is started
(its start-up time and the time placing the containers took are reported), then:

* pages: each SCM page opened afresh (about:blank, then the page's URL) until ozone.js marks it rendered
  (main[data-loaded=true][data-page=ROUTE]); the median and worst of `--samples` opens, PASS under
  `--budget` seconds (2 s: issue 16's acceptance);
* APIs: the JSON APIs the pages read, the median and worst of `--samples` GETs, and the size answered;
* /prom: the scrape time and size;
* stalls: a thread GETs /ready every 100 ms for the whole measurement, which ends after the Replication
  Manager's next full scan (its report's timestamp moves: up to hdds.scm.replication.thread.interval,
  5 minutes); the worst answer shows how long the single-threaded core held the event loop (heartbeats,
  ticks, the scan). The pages are measured first, between two scans (the first ran before serving).

Chromium and chromedriver come from Debian (`apt install chromium chromium-driver`); selenium is a dev
dependency.

    python -m benchmarks.webui_scale
    python -m benchmarks.webui_scale --datanodes 500 --containers 100000 --samples 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from benchmarks.common import print_table

PAGES = ("overview", "pipelines", "datanodes", "containers", "container", "safemode", "charts", "config")
APIS = (
    "/api/v1/overview",
    "/api/v1/safemode",
    "/api/v1/pipelines/statistics",
    "/api/v1/pipelines/datanodes?limit=25",
    "/api/v1/pipelines?limit=25",
    "/api/v1/datanodes?limit=25",
    "/api/v1/charts/datanodes",
    "/api/v1/containers/report",
    "/api/v1/containers?limit=25",
    "/api/v1/containers?limit=25&offset={middle}",
    "/api/v1/containers/{container}",
    "/api/v1/history/containers",
    "/conf?format=json",
)
START_TIMEOUT_S = 900.0
PAGE_TIMEOUT_S = 60.0
RM_WAIT_S = 360.0


@dataclass(frozen=True, slots=True)
class Shape:
    name: str
    datanodes: int
    racks: int
    containers: int


@dataclass(slots=True)
class Measured:
    start_s: float = 0.0
    placed_s: float = 0.0
    pages: dict[str, list[float]] = field(default_factory=dict)
    apis: dict[str, tuple[list[float], int]] = field(default_factory=dict)
    prom: tuple[list[float], int] = ([], 0)
    stalls: list[float] = field(default_factory=list)
    rm_scan_seen: bool = False


@contextmanager
def sim_server(shape: Shape, minutes: float, serve_for: float) -> Iterator[tuple[str, float, float]]:
    """A `pyozone sim` serving SCM's UI: yields (URL, start-up seconds, placement seconds)."""
    command = [
        sys.executable,
        "-m",
        "pyozone",
        "sim",
        "--json",
        f"--datanodes={shape.datanodes}",
        f"--racks={shape.racks}",
        f"--containers={shape.containers}",
        f"--minutes={minutes}",
        "--serve=127.0.0.1:0",
        f"--serve-for={serve_for}",
    ]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        placed_s = 0.0
        assert process.stdout is not None
        for line in process.stdout:
            event = json.loads(line)
            if event.get("event") == "placed":
                placed_s = event["seconds"]
            elif event.get("event") == "serving":
                yield event["url"].rstrip("/"), time.perf_counter() - started, placed_s
                return
            if time.perf_counter() - started > START_TIMEOUT_S:
                break
        raise RuntimeError(f"{' '.join(command)} did not serve (exit {process.poll()})")
    finally:
        process.terminate()
        process.wait(30)


def get(url: str) -> tuple[float, bytes]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
    return time.perf_counter() - started, body


class StallMonitor:
    """GETs /ready every 100 ms on its own thread; `worst` is the longest answer."""

    def __init__(self, base: str) -> None:
        self.base, self.times = base, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.times.append(get(f"{self.base}/ready")[0])

    def __enter__(self) -> StallMonitor:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def chromium() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary:
        options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1400,1000")
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    driver.set_page_load_timeout(PAGE_TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def render(driver, base: str, route: str, query: str) -> float:
    """Seconds from navigating to the page until ozone.js marks it rendered (polled every 10 ms)."""
    from selenium.webdriver.common.by import By

    driver.get("about:blank")
    selector = f'main#main[data-loaded="true"][data-page="{route}"]'
    started = time.perf_counter()
    driver.get(f"{base}/#!/{route}" + (f"?{query}" if query else ""))
    while True:
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        if found:
            elapsed = time.perf_counter() - started
            errors = found[0].find_elements(By.CSS_SELECTOR, "p.error")
            if errors:
                raise RuntimeError(f"{route}: the page shows {errors[0].text!r}")
            return elapsed
        if time.perf_counter() - started > PAGE_TIMEOUT_S:
            raise RuntimeError(f"{route} did not render within {PAGE_TIMEOUT_S:.0f} s")
        time.sleep(0.01)


def measure(shape: Shape, args: argparse.Namespace) -> Measured:
    m = Measured()
    with sim_server(shape, args.minutes, args.serve_for) as (base, m.start_s, m.placed_s):
        print(f"{shape.name}: serving at {base} after {m.start_s:.1f} s", flush=True)
        listed = json.loads(get(f"{base}/api/v1/containers?limit=1&offset={shape.containers // 2}")[1])
        container = listed["items"][0]["containerID"]
        with StallMonitor(base) as stalls, chromium() as driver:
            for route in PAGES:
                query = f"id={container}" if route == "container" else ""
                m.pages[route] = [render(driver, base, route, query) for _ in range(args.samples)]
            for path in APIS:
                url = base + path.format(middle=shape.containers // 2, container=container)
                answers = [get(url) for _ in range(args.samples)]
                m.apis[path] = ([t for t, _ in answers], len(answers[-1][1]))
            scrapes = [get(f"{base}/prom") for _ in range(args.samples)]
            m.prom = ([t for t, _ in scrapes], len(scrapes[-1][1]))
            m.rm_scan_seen = next_rm_scan(base)
        m.stalls = stalls.times
    return m


def rm_report_time(base: str) -> int:
    return json.loads(get(f"{base}/api/v1/containers/report")[1])["reportTimeStamp"]


def next_rm_scan(base: str) -> bool:
    """Waits (at most RM_WAIT_S) until the Replication Manager finished another full scan."""
    first, deadline = rm_report_time(base), time.monotonic() + RM_WAIT_S
    while time.monotonic() < deadline:
        if rm_report_time(base) != first:
            return True
        time.sleep(1)
    return False


def ms(times: list[float]) -> str:
    return f"{1000 * statistics.median(times):,.0f} / {1000 * max(times):,.0f} ms"


def report(base: Measured, scale: Measured, shapes: tuple[Shape, Shape], budget_s: float) -> bool:
    small, big = shapes
    rows = [
        ("start-up (run, placement, listening)", f"{base.start_s:.1f} s | {scale.start_s:.1f} s"),
        ("  of which placing the containers", f"{base.placed_s:.1f} s | {scale.placed_s:.1f} s"),
    ]
    passed = True
    for route, times in scale.pages.items():
        verdict = "PASS" if max(times) < budget_s else "FAIL"
        passed &= verdict == "PASS"
        rows.append((f"page {route} (median / worst)", f"{ms(base.pages[route])} | {ms(times)}  {verdict}"))
    for path, (times, size) in scale.apis.items():
        rows.append((f"GET {path}", f"{ms(base.apis[path][0])} | {ms(times)}  ({size:,} B)"))
    rows.append(("GET /prom", f"{ms(base.prom[0])} | {ms(scale.prom[0])}  ({scale.prom[1]:,} B)"))
    worst = max(scale.stalls, default=0.0)
    rm = "with" if scale.rm_scan_seen else "NOT with (none ended in time)"
    rows.append((f"GET /ready every 100 ms, {rm} an RM full scan", f"{ms(base.stalls)} | {ms(scale.stalls)}"))
    rows.append(("/ready answers over the budget", f"{sum(t >= budget_s for t in scale.stalls)}"))
    rows.append(("verdict", f"{'PASS' if passed else 'FAIL'}: every page under {budget_s:g} s"))
    print_table(
        f"SCM web UI: baseline {small.datanodes:,} datanodes / {small.containers:,} containers | "
        f"{big.datanodes:,} datanodes on {big.racks} racks / {big.containers:,} containers "
        f"(worst /ready {1000 * worst:,.0f} ms)",
        rows,
    )
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datanodes", type=int, default=5_000)
    parser.add_argument("--racks", type=int, default=50)
    parser.add_argument("--containers", type=int, default=1_000_000)
    parser.add_argument("--minutes", type=float, default=7.0, help="virtual minutes before serving")
    parser.add_argument("--serve-for", type=float, default=1_800.0, help="a bound on each sim's serving")
    parser.add_argument("--samples", type=int, default=3, help="opens of each page, GETs of each API")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds a page may take to render")
    args = parser.parse_args()
    shapes = (Shape("baseline", 5, 1, 1_000), Shape("scale", args.datanodes, args.racks, args.containers))
    base = measure(shapes[0], args)
    scale = measure(shapes[1], args)
    sys.exit(0 if report(base, scale, shapes, args.budget) else 1)


if __name__ == "__main__":
    main()
