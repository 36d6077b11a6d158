"""`pyozone getconf` through the real entry point."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pyozone.cli.main import main

STALE = "ozone.scm.stale.node.interval"
Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    def call(*argv: str) -> tuple[int, str, str]:
        code = main(["getconf", *argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def conf_dir(tmp_path: Path) -> Path:
    (tmp_path / "ozone-site.xml").write_text(
        "<configuration>"
        "<property><name>ozone.scm.dead.node.interval</name><value>20m</value></property>"
        "<property><name>ozone.om.address</name><value>om1:9862</value></property>"
        "</configuration>"
    )
    return tmp_path


def test_conf_key_prints_default(run: Run) -> None:
    assert run("-confKey", STALE) == (0, "5m\n", "")


def test_conf_key_prints_override(run: Run) -> None:
    assert run("-confKey", STALE, "-D", f"{STALE}=90s") == (0, "90s\n", "")


def test_conf_key_from_site_file(run: Run, conf_dir: Path) -> None:
    assert run("--conf", str(conf_dir), "-confKey", "ozone.scm.dead.node.interval") == (0, "20m\n", "")
    assert run("--conf", str(conf_dir), "-confKey", "ozone.om.address") == (0, "om1:9862\n", "")


def test_conf_dir_from_environment(run: Run, conf_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OZONE_CONF_DIR", str(conf_dir))
    assert run("-confKey", "ozone.scm.dead.node.interval") == (0, "20m\n", "")


def test_known_key_without_value_prints_empty(run: Run) -> None:
    assert run("-confKey", "ozone.metadata.dirs") == (0, "\n", "")


def test_unknown_key_fails_with_suggestion(run: Run) -> None:
    code, out, err = run("-confKey", "ozone.scm.stale.node.intervall")
    assert (code, out) == (1, "")
    assert err == (
        "pyozone getconf: error: ozone.scm.stale.node.intervall: not a configuration key pyozone knows "
        f"(did you mean {STALE}?)\n"
    )


def test_all_shows_sources(run: Run, conf_dir: Path) -> None:
    code, out, _ = run("--all", "--conf", str(conf_dir), "-D", f"{STALE}=2m")
    lines = out.splitlines()
    assert code == 0
    assert [line.split("=")[0] for line in lines] == sorted(line.split("=")[0] for line in lines)
    site = conf_dir / "ozone-site.xml"
    assert f"{STALE}=2m  [override]" in lines
    assert f"ozone.scm.dead.node.interval=20m  [file:{site}]" in lines
    assert f"ozone.om.address=om1:9862  [file:{site}]" in lines
    assert "ozone.scm.block.size=256MB  [default]" in lines
    assert "ozone.metadata.dirs=  [unset]" in lines


def test_all_json(run: Run) -> None:
    code, out, _ = run("--all", "--json", "-D", f"{STALE}=2m")
    data = json.loads(out)
    assert code == 0
    assert data[STALE] == {"value": "2m", "source": "override"}
    assert data["ozone.scm.block.size"] == {"value": "256MB", "source": "default"}
    assert data["ozone.metadata.dirs"] == {"value": None, "source": "unset"}


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("-confKey", STALE, "-D", f"{STALE}=soon"), f"{STALE}: invalid value 'soon' from override"),
        (("-confKey", STALE, "-D", f"{STALE}=20m"), "the stale interval must be less than the dead interval"),
        (("-confKey", STALE, "-D", "ozone.scm.stale.nodes.interval=1m"), f"did you mean {STALE}?"),
        (("-confKey", STALE, "-D", "novalue"), "expected KEY=VALUE"),
        (("-confKey", STALE, "--conf", "/nonexistent/conf"), "/nonexistent/conf does not exist"),
        (("-confKey", STALE, "--json"), "--json only applies to --all"),
    ],
)
def test_errors_are_one_line_and_exit_1(run: Run, argv: tuple[str, ...], needle: str) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (1, "")
    assert err.startswith("pyozone getconf: error: ")
    assert err.count("\n") == 1
    assert needle in err


def test_bad_site_file_is_one_line(run: Run, tmp_path: Path) -> None:
    (tmp_path / "ozone-site.xml").write_text("<configuration>\n<property>\n</configuration>")
    code, _, err = run("--conf", str(tmp_path), "--all")
    assert code == 1
    assert err.count("\n") == 1
    assert "malformed XML" in err


@pytest.mark.parametrize("argv", [(), ("-confKey", STALE, "--all"), ("--al",)])
def test_exactly_one_of_conf_key_and_all(run: Run, argv: tuple[str, ...]) -> None:
    with pytest.raises(SystemExit) as e:
        run(*argv)
    assert e.value.code == 2
