"""The multipart/form-data parser of POST Object (form_data.py): the same events however the body is cut
(property test), the file streamed and the parts after it skipped, and its refusals (RFC 7578; Amazon's
MalformedPOSTRequest, MaxPostPreDataLengthExceededError, and 412 for another Content-Type)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.form_data import Event, Field, FileData, FileEnd, FileStart, FormDataParser, form_boundary

BOUNDARY = b"----WebKitFormBoundary7MA4YWxkTrZu0gW"


def part(name: str, value: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    head = f"Content-Disposition: {disposition}\r\n" + ("Content-Type: image/png\r\n" if filename else "")
    return b"--" + BOUNDARY + b"\r\n" + head.encode() + b"\r\n" + value + b"\r\n"


def form(*parts: bytes) -> bytes:
    return b"".join(parts) + b"--" + BOUNDARY + b"--\r\n"


def parse(body: bytes, cuts: list[int] = [], limit: int = 1 << 20) -> list[Event]:  # noqa: B006
    parser = FormDataParser(BOUNDARY, limit)
    events: list[Event] = []
    start = 0
    for cut in [*sorted(cuts), len(body)]:
        events += parser.feed(body[start:cut])
        start = cut
    parser.finish()
    return events


def merged(events: list[Event]) -> list[Event]:
    """The events with the file's data joined: how the data is cut depends on the pieces fed."""
    out: list[Event] = []
    for event in events:
        if isinstance(event, FileData) and out and isinstance(out[-1], FileData):
            out[-1] = FileData(out[-1].data + event.data)
        elif not (isinstance(event, FileData) and not event.data):
            out.append(event)
    return out


FILE = b"\r\n--" + BOUNDARY[:-1] + b"\r\n\x00data\r\n--"  # almost a boundary, and line ends
BODY = form(
    part("key", b"up/${filename}"),
    part("x-amz-meta-é", "é".encode()),
    part("file", FILE, "a.png"),
    part("after", b"ignored"),
)
EXPECTED = [
    Field("key", "up/${filename}"),
    Field("x-amz-meta-é", "é"),
    FileStart("a.png", "image/png"),
    FileData(FILE),
    FileEnd(),
]


def test_a_form_parses_and_the_parts_after_the_file_are_skipped() -> None:
    assert merged(parse(BODY)) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=20))
def test_any_cutting_of_the_body_gives_the_same_events(cuts: list[int]) -> None:
    events = parse(BODY, cuts)
    assert merged(events) == EXPECTED
    assert all(len(e.data) <= len(BODY) for e in events if isinstance(e, FileData))


def test_a_preamble_and_an_epilogue_are_ignored() -> None:
    assert merged(parse(b"preamble\r\n" + form(part("k", b"v")) + b"epilogue")) == [Field("k", "v")]


def test_the_fields_are_bounded() -> None:
    with pytest.raises(S3Error) as e:
        parse(form(part("a", b"x" * 10), part("b", b"y" * 10)), limit=15)
    assert e.value.code is S3ErrorCode.MaxPostPreDataLengthExceededError
    assert merged(parse(form(part("file", b"z" * 100, "f")), limit=15))[1] == FileData(b"z" * 100)


@pytest.mark.parametrize(
    "body",
    [
        form(part("k", b"v"))[:-8],  # no closing boundary
        b"--" + BOUNDARY + b"\r\nno colon here\r\n\r\nv\r\n--" + BOUNDARY + b"--",
        b"--" + BOUNDARY + b"\r\nContent-Disposition: attachment\r\n\r\nv\r\n--" + BOUNDARY + b"--",
        b"--" + BOUNDARY + b"\r\nContent-Disposition: form-data\r\n\r\nv\r\n--" + BOUNDARY + b"--",
        b"--" + BOUNDARY + b"junk",
        form(part("k", b"\xff")),
    ],
)
def test_malformed_bodies(body: bytes) -> None:
    with pytest.raises(S3Error) as e:
        parse(body)
    assert e.value.code is S3ErrorCode.MalformedPOSTRequest


def test_the_boundary_of_a_form_and_other_types() -> None:
    assert form_boundary('multipart/form-data; boundary="a b"') == b"a b"
    for content_type in (None, "text/plain", "multipart/form-data", "multipart/mixed; boundary=x"):
        with pytest.raises(S3Error) as e:
            form_boundary(content_type)
        assert e.value.code is S3ErrorCode.PreconditionFailed
