"""Blocking socket reads of exact sizes, into the caller's buffers."""

from __future__ import annotations

import socket
import ssl


class PeerClosed(ConnectionError):
    """The peer closed the connection; `clean` when it did so between frames."""

    def __init__(self, clean: bool) -> None:
        super().__init__("the peer closed the connection" + ("" if clean else " inside a frame"))
        self.clean = clean


def recv_into_exact(conn: socket.socket, view: memoryview) -> None:
    """Fills `view` (no copy: the kernel writes into it); PeerClosed if the stream ends first."""
    done = 0
    while done < len(view):
        n = conn.recv_into(view[done:])
        if n == 0:
            raise PeerClosed(clean=False)
        done += n


def recv_exact(conn: socket.socket, n: int, at_frame_start: bool = False) -> bytes:
    """`n` bytes of a small frame. With `at_frame_start`, an end before the first byte is a clean close."""
    buf = bytearray(n)
    view = memoryview(buf)
    first = conn.recv_into(view)
    if first == 0:
        raise PeerClosed(clean=at_frame_start)
    recv_into_exact(conn, view[first:])
    return bytes(buf)


def send_all(conn: socket.socket, *buffers: bytes | memoryview) -> None:
    """Sends the buffers in order with scatter-gather writes: one system call for a packet's frame,
    checksums and data, none of them joined (copied) first. A TLS socket has no scatter-gather write:
    each buffer is encrypted and sent in turn, still none joined (tls.py)."""
    if isinstance(conn, ssl.SSLSocket):
        for buffer in buffers:
            if len(buffer):
                conn.sendall(buffer)
        return
    views = [memoryview(b).cast("B") for b in buffers if len(b)]
    while views:
        sent = conn.sendmsg(views)
        while sent:
            if sent >= len(views[0]):
                sent -= len(views.pop(0))
            else:
                views[0] = views[0][sent:]
                sent = 0
