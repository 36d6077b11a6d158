"""issue 29 review: a client that never reads its answers could pin 33 requests of up to 33 MiB per stream
on the data port (the layer's default window of 32); the data port's window is STREAM_WINDOW."""

from __future__ import annotations

from pyozone.datanode.xceiver.service import MAX_IN_FLIGHT, STREAM_WINDOW, xceiver_server
from pyozone.hdds.limits import MAX_DATA_MESSAGE_BYTES, MiB


def test_the_data_port_pins_a_bounded_number_of_requests_per_stream() -> None:
    settings = xceiver_server().settings
    assert settings.stream_queue == STREAM_WINDOW
    assert 21 * 33 * MiB >= (MAX_IN_FLIGHT + STREAM_WINDOW + 1) * MAX_DATA_MESSAGE_BYTES
