"""A `multipart/form-data` body (RFC 7578) as a browser's POST Object sends it, parsed as it streams: sans-IO,
fed the body in any pieces, it gives the fields before the file whole and the file as data events, never
holding more of the file than one piece and the boundary's length.

Amazon reads the fields up to the part named `file` and ignores every part after it; so does this parser:
once the file's part ends, the rest of the body is not looked at (nor is RFC 2046's epilogue). Everything
before the file's data (preamble, boundaries, padding, part headers, names and values) counts toward one
bound, Amazon's 20 KB (MaxPostPreDataLengthExceededError, MaxPostPreDataLengthBytes 20480): it also bounds
the number of fields, since each costs at least its boundary and Content-Disposition. A part's headers and
a boundary's padding have their own bounds too. Each byte is looked at a bounded number of times: consumed
bytes are deleted from the front of the buffer (O(1) for a bytearray), a head's end is searched in a window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import Message
from enum import Enum, auto

from pyozone.s3g.errors import S3Error, S3ErrorCode

FILE_FIELD = "file"
MAX_PART_HEAD = 8192
"""The most bytes of one part's headers (Content-Disposition and Content-Type are all a form part has)."""
MAX_PADDING = 1024
"""The most spaces and tabs after a boundary (RFC 2046's transport padding, which no browser sends)."""
_CRLF = b"\r\n"
_HEAD_END = _CRLF + _CRLF
_PADDING = re.compile(rb"[ \t]*")


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class FileStart:
    filename: str
    """As the part names it (a path, if the client sent one)."""
    content_type: str | None


@dataclass(frozen=True, slots=True)
class FileData:
    data: bytes


@dataclass(frozen=True, slots=True)
class FileEnd:
    pass


Event = Field | FileStart | FileData | FileEnd


class _State(Enum):
    PREAMBLE = auto()
    AFTER_DELIMITER = auto()
    HEAD = auto()
    BODY = auto()
    DONE = auto()


def form_boundary(content_type: str | None) -> bytes:
    """The boundary of a `multipart/form-data` Content-Type; any other type is Amazon's 412."""
    message = Message()
    message["content-type"] = content_type or ""
    boundary = message.get_param("boundary")
    if message.get_content_type() != "multipart/form-data" or not isinstance(boundary, str) or not boundary:
        raise S3Error(
            S3ErrorCode.PreconditionFailed,
            Condition="Bucket POST must be of the enclosure-type multipart/form-data",
        )
    return boundary.encode("latin-1", "replace")


def malformed(detail: str) -> S3Error:
    return S3Error(
        S3ErrorCode.MalformedPOSTRequest,
        f"The body of your POST request is not well-formed multipart/form-data. ({detail})",
    )


class FormDataParser:
    """Feed it the body; `finish` once it ended. Events come in the form's order."""

    def __init__(self, boundary: bytes, max_pre_data_bytes: int) -> None:
        self._delimiter = b"--" + boundary
        self._separator = _CRLF + self._delimiter  # what ends a part's body
        self._max_pre_data_bytes = max_pre_data_bytes
        self._pre_data_bytes = 0  # consumed before the file's data
        self._padding = 0  # after the current boundary
        self._buffer = bytearray()
        self._state = _State.PREAMBLE
        self._part: str | None = None  # the current part's field name; FILE_FIELD for the file
        self._value = bytearray()
        self._file_seen = False

    def feed(self, data: bytes | bytearray | memoryview) -> list[Event]:
        if self._state is _State.DONE:
            return []  # the epilogue, which RFC 2046 says to ignore
        self._buffer += data
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def finish(self) -> None:
        if self._state is not _State.DONE:
            raise malformed("the body ended before its closing boundary")

    def _consume(self, count: int) -> None:
        """Drops `count` bytes from the buffer's front; before the file's data they count toward the bound."""
        del self._buffer[:count]
        if not self._file_seen:
            self._pre_data_bytes += count
            self._check_pre_data(0)

    def _front(self, count: int) -> bytes:
        """The buffer's first `count` bytes, copied once (`bytes(buffer[:count])` copies them twice: up to
        buffer_size of the file each time); the views are released before the buffer is resized."""
        with memoryview(self._buffer) as view, view[:count] as front:
            return bytes(front)

    def _check_pre_data(self, pending: int) -> None:
        if not self._file_seen and self._pre_data_bytes + pending > self._max_pre_data_bytes:
            raise S3Error(
                S3ErrorCode.MaxPostPreDataLengthExceededError,
                MaxPostPreDataLengthBytes=str(self._max_pre_data_bytes),
            )

    def _step(self, events: list[Event]) -> bool:
        """One transition if the buffer holds enough for it; False: more bytes are needed."""
        buffer = self._buffer
        if self._state is _State.PREAMBLE:
            at = buffer.find(self._delimiter)
            if at < 0:  # kept: a delimiter's start and the line end before it (R30's P6)
                self._consume(max(0, len(buffer) - len(self._delimiter) - len(_CRLF)))
                return False
            if at > 0 and buffer[at - 2 : at] != _CRLF:
                raise malformed("the first boundary does not begin a line")
            self._consume(at + len(self._delimiter))
            self._state = _State.AFTER_DELIMITER
            return True
        if self._state is _State.AFTER_DELIMITER:
            padding = _PADDING.match(buffer, 0, MAX_PADDING + 1 - self._padding)
            assert padding is not None  # [ \t]* matches the empty string
            self._padding += padding.end()
            if self._padding > MAX_PADDING:
                raise malformed("a boundary is followed by too much padding")
            self._consume(padding.end())
            if len(buffer) < 2:
                return False
            self._padding = 0
            if buffer[:2] != b"--" and buffer[:2] != _CRLF:
                raise malformed("a boundary is not followed by a line end")
            if buffer[:2] == b"--" or self._part == FILE_FIELD:  # what follows the file is ignored
                if self._part == FILE_FIELD:
                    events.append(FileEnd())
                self._state = _State.DONE
                buffer.clear()
                return False
            self._consume(2)
            self._state = _State.HEAD
            return True
        if self._state is _State.HEAD:
            end = 0 if buffer[:2] == _CRLF else buffer.find(_HEAD_END, 0, MAX_PART_HEAD + len(_HEAD_END))
            if end < 0:
                if len(buffer) >= MAX_PART_HEAD + len(_HEAD_END):
                    raise malformed("a part's headers are too long")
                self._check_pre_data(len(buffer))
                return False
            head = bytes(buffer[:end])
            self._consume(end + (2 if end == 0 else 4))
            self._begin_part(head, events)
            self._state = _State.BODY
            return True
        if self._state is _State.BODY:
            at = buffer.find(self._separator)
            if at < 0:
                keep = len(self._separator) - 1
                if len(buffer) > keep:
                    self._part_data(self._front(len(buffer) - keep), events)
                    self._consume(len(buffer) - keep)
                return False
            if at:
                self._part_data(self._front(at), events)
            self._consume(at + len(self._separator))
            if self._part != FILE_FIELD:  # the file ends once its delimiter is seen to end a line (P4)
                self._end_part(events)
            self._state = _State.AFTER_DELIMITER
            return True
        return False

    def _begin_part(self, head: bytes, events: list[Event]) -> None:
        try:
            text = head.decode("utf-8")
        except UnicodeDecodeError:
            raise malformed("a part's headers are not UTF-8") from None
        headers = Message()
        for line in text.split("\r\n"):
            name, colon, value = line.partition(":")
            if not colon:
                raise malformed(f"the part header line {line!r} is not name: value")
            headers[name.strip()] = value.strip()
        if headers.get_content_disposition() != "form-data":
            raise malformed("a part is not Content-Disposition: form-data")
        name = headers.get_param("name", header="content-disposition")
        if not isinstance(name, str) or not name:
            raise malformed("a part has no name")
        if name.lower() == FILE_FIELD:
            self._file_seen = True
            self._part = FILE_FIELD
            content_type = headers.get("content-type")
            events.append(FileStart(_filename(headers), str(content_type) if content_type else None))
            return
        self._part = name
        self._value.clear()

    def _part_data(self, data: bytes, events: list[Event]) -> None:
        if self._part == FILE_FIELD:
            events.append(FileData(data))
            return
        self._check_pre_data(len(data))
        self._value += data

    def _end_part(self, events: list[Event]) -> None:
        assert self._part is not None
        try:
            value = self._value.decode("utf-8")
        except UnicodeDecodeError:
            raise malformed(f"the field {self._part} is not UTF-8") from None
        events.append(Field(self._part, value))


def _filename(headers: Message) -> str:
    """The file part's filename, decoded strictly (RFC 2231's `filename*` in its charset): a name that is
    not text is refused, never turned into U+FFFD (two such names would be one key)."""
    raw = headers.get_param("filename", header="content-disposition")
    if raw is None:
        return ""
    if isinstance(raw, tuple):  # filename*=charset'language'percent-encoded
        charset, _, encoded = raw
        try:
            return str(encoded).encode("latin-1").decode(charset or "us-ascii").strip()
        except (LookupError, UnicodeError):
            raise malformed(f"the file's name is not {charset or 'us-ascii'}") from None
    return raw.strip()
