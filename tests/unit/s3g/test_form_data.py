"""The multipart/form-data parser of POST Object (form_data.py): the same events however the body is cut
(property test), the file streamed and the parts after it skipped, and its refusals (RFC 7578; Amazon's
MalformedPOSTRequest, MaxPostPreDataLengthExceededError, and 412 for another Content-Type), each bounded
in memory and linear in time (review R28 F1, F2, F4, F10)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pyozone.s3g.errors import S3Error, S3ErrorCode
from pyozone.s3g.form_data import (
    MAX_PADDING,
    MAX_PART_HEAD,
    Event,
    Field,
    FileData,
    FileEnd,
    FileStart,
    FormDataParser,
    form_boundary,
)

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


def test_a_preamble_and_an_epilogue_are_ignored_however_the_body_is_cut() -> None:
    """R30's P6: a piece ending one byte short of the first boundary lost the line end before it."""
    body = b"preamble\r\n" + form(part("k", b"v")) + b"epilogue"
    for cut in range(len(body) + 1):
        assert merged(parse(body, [cut])) == [Field("k", "v")], cut


def test_a_file_ended_by_a_boundary_with_more_after_it_is_malformed() -> None:
    """R30's P4: the file's data held CRLF--boundary and then other bytes: it was stored cut there."""
    file = b"--" + BOUNDARY + b'\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n'
    with pytest.raises(S3Error) as e:
        parse(file + b"first half\r\n--" + BOUNDARY + b"xyz the rest\r\n--" + BOUNDARY + b"--\r\n")
    assert e.value.code is S3ErrorCode.MalformedPOSTRequest
    for end in (b"--", b"  \t--\r\n", b"\r\nafter"):  # the closing boundary, padding, another part
        assert merged(parse(file + b"data\r\n--" + BOUNDARY + end))[-2:] == [FileData(b"data"), FileEnd()]


def test_everything_before_the_file_is_bounded() -> None:
    """Review R28 F2: names, part headers and boundaries count, not only the values."""
    fields = part("a", b"x" * 10) + part("b", b"y" * 10)
    size = len(fields) + len(BOUNDARY) + 2  # and the closing boundary's "--" + BOUNDARY
    assert merged(parse(form(fields), limit=size)) == [Field("a", "x" * 10), Field("b", "y" * 10)]
    with pytest.raises(S3Error) as e:
        parse(form(fields), limit=size - 1)
    assert e.value.code is S3ErrorCode.MaxPostPreDataLengthExceededError
    assert e.value.extra == {"MaxPostPreDataLengthBytes": str(size - 1)}
    file_head = len(part("file", b"", "f")) - 2  # its data is not counted, however long
    assert merged(parse(form(part("file", b"z" * 100, "f")), limit=file_head))[1] == FileData(b"z" * 100)


def refused_at(pieces: Iterator[bytes], code: S3ErrorCode, limit: int = 20 * 1024) -> int:
    """How many bytes the parser was fed when it refused the body with `code`."""
    parser = FormDataParser(b"B", limit)
    fed = 0
    with pytest.raises(S3Error) as e:
        for piece in pieces:
            fed += len(piece)
            parser.feed(piece)
    assert e.value.code is code, e.value.message
    return fed


def test_many_fields_with_long_names_and_empty_values_are_refused_within_the_bound() -> None:
    """Review R28 F2: 20,000 parts named by 8,000 bytes, empty: refused after the first three."""
    name = b"x-amz-meta-" + b"a" * 8000
    parts = (b'\r\nContent-Disposition: form-data; name="' + name + b'"\r\n\r\n\r\n--B' for _ in range(20000))
    assert refused_at(chain([b"--B"], parts), S3ErrorCode.MaxPostPreDataLengthExceededError) < 4 * 8100


def test_a_part_head_over_its_bound_is_refused_even_whole_in_one_piece() -> None:
    """Review R28 F2 addendum: a 3 MiB name whose head ends in the same piece."""
    head = b'--B\r\nContent-Disposition: form-data; name="' + b"n" * (3 << 20) + b'"\r\n\r\nv\r\n--B--\r\n'
    refused_at(iter([head]), S3ErrorCode.MalformedPOSTRequest, limit=8 << 20)
    after_file = b'--B\r\nContent-Disposition: form-data; name="file"\r\n\r\n'
    refused_at(
        iter([after_file[:-4] + b"; x=" + b"n" * MAX_PART_HEAD]), S3ErrorCode.MalformedPOSTRequest, 8 << 20
    )


@pytest.mark.parametrize("piece", [1, 65536])
def test_endless_padding_after_a_boundary_is_refused_within_its_bound(piece: int) -> None:
    """Review R28 F1: spaces after a boundary, 13 MB of them: refused after MAX_PADDING, whatever the
    pieces, before or after the fields' bound could apply."""
    padding = (b" " * piece for _ in range((13 << 20) // piece))
    fed = refused_at(chain([b"--B"], padding), S3ErrorCode.MalformedPOSTRequest, limit=1 << 30)
    assert fed <= 3 + MAX_PADDING + piece


def test_a_body_without_a_boundary_is_refused_at_the_bound() -> None:
    """A preamble that never ends (or a client stalling before its first boundary) is pre-data too."""
    assert refused_at(
        (b"\r\n" * 512 for _ in range(10000)), S3ErrorCode.MaxPostPreDataLengthExceededError
    ) <= (20 * 1024 + 1024)


def test_tiny_parts_after_the_file_are_not_parsed() -> None:
    """Review R28 F10: 270,600 empty parts after the file (15 MiB in 4 MiB pieces) cost nothing: Amazon
    ignores what follows the file, so the parser looks at none of it (it froze the gateway for 29 s)."""
    tiny = b'\r\n--B\r\nContent-Disposition: form-data; name="x-amz-meta-a"\r\n\r\n'
    body = b'--B\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\nd' + tiny * 270600
    parser = FormDataParser(b"B", 20 * 1024)
    events = [e for at in range(0, len(body), 4 << 20) for e in parser.feed(body[at : at + (4 << 20)])]
    parser.finish()
    assert events == [FileStart("f", None), FileData(b"d"), FileEnd()]


def test_many_tiny_parts_before_the_file_are_refused_at_the_bound() -> None:
    """Review R28 F10: the same parts before the file: refused once they pass 20 KB."""
    tiny = b'\r\nContent-Disposition: form-data; name="x-amz-meta-a"\r\n\r\n\r\n--B'
    fed = refused_at(iter([b"--B" + tiny * 67650]), S3ErrorCode.MaxPostPreDataLengthExceededError)
    assert fed == 3 + len(tiny) * 67650  # one 4 MiB piece, refused in it


@pytest.mark.parametrize(
    ("disposition", "filename"),
    [
        (b'filename="../../x"', "../../x"),  # as sent: post_object keeps the text after the last / or \\
        ('filename="\u00e9.txt"'.encode(), "\u00e9.txt"),
        (b"filename*=UTF-8''%C3%A9%2F.txt", "\u00e9/.txt"),
        (b"filename*=ISO-8859-1''%E9.txt", "\u00e9.txt"),
    ],
)
def test_the_filename_is_decoded(disposition: bytes, filename: str) -> None:
    head = b'Content-Disposition: form-data; name="file"; ' + disposition
    events = parse(b"--" + BOUNDARY + b"\r\n" + head + b"\r\n\r\nd\r\n--" + BOUNDARY + b"--")
    assert events[0] == FileStart(filename, None)


@pytest.mark.parametrize(
    "body",
    [
        form(part("k", b"v"))[:-8],  # no closing boundary
        b"--" + BOUNDARY + b"\r\nno colon here\r\n\r\nv\r\n--" + BOUNDARY + b"--",
        b"--" + BOUNDARY + b"\r\nContent-Disposition: attachment\r\n\r\nv\r\n--" + BOUNDARY + b"--",
        b"--" + BOUNDARY + b"\r\nContent-Disposition: form-data\r\n\r\nv\r\n--" + BOUNDARY + b"--",
        b"--" + BOUNDARY + b"junk",
        form(part("k", b"\xff")),
        # review R28 F4: a filename that is not text is refused, not turned into U+FFFD
        b"--"
        + BOUNDARY
        + b'\r\nContent-Disposition: form-data; name="file"; filename="\xff\xfe.txt"\r\n\r\n',
        b"--" + BOUNDARY + b"\r\nContent-Disposition: form-data; name=file; filename*=UTF-8''%FF.txt\r\n\r\n",
        b"--" + BOUNDARY + b"\r\nContent-Disposition: form-data; name=file; filename*=nope''x\r\n\r\n",
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
