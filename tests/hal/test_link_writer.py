"""The link's writing half (controller.hal.link_writer): a write to a tty goes whole."""

from __future__ import annotations

import pytest


class _FdPort:
    """A port with a file descriptor: what ``_write_all`` writes straight, and what
    pyserial's own write (the fallback) was given."""

    fd = 99

    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.written.append(bytes(data))
        return len(data)


@pytest.mark.parametrize(
    ("takes", "direct", "fallback"),
    [
        ([100], b"0123456789", []),  # all at once
        ([3, 4, 100], b"0123456789", []),  # the kernel took it in three
        ([3, None], b"012", [b"3456789"]),  # then its buffer was full: pyserial waits
        ([None], b"", [b"0123456789"]),
    ],
)
def test_write_all_writes_every_byte_once(
    monkeypatch: pytest.MonkeyPatch,
    takes: list[int | None],
    direct: bytes,
    fallback: list[bytes],
) -> None:
    from controller.hal import link_writer

    wrote = bytearray()
    left = list(takes)

    def write(fd: int, data: bytes | memoryview) -> int:
        assert fd == _FdPort.fd
        take = left.pop(0)
        if take is None:
            raise BlockingIOError
        wrote.extend(bytes(data)[:take])
        return min(take, len(data))

    monkeypatch.setattr("controller.hal.link_writer.os.write", write)
    port = _FdPort()
    link_writer._write_all(port, b"0123456789")  # type: ignore[arg-type]
    assert bytes(wrote) == direct
    assert port.written == fallback
