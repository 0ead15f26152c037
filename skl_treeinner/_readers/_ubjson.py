"""A minimal Universal Binary JSON decoder for XGBoost models.

Why hand-written: reading a 500-tree model through ``save_raw("json")`` and
``json.loads`` takes about as long as routing 10,000 rows through it, because
every node statistic becomes a Python float. XGBoost's binary format
(``save_raw("ubj")``, UBJSON draft 12) stores each per-tree vector as one
*typed array*, which this decoder returns as a numpy array in a single
``np.frombuffer`` call: about 10 times faster. The only maintained-looking
alternative on PyPI (py-ubjson, last released 2020) returns Python lists, so
it would not help. The decoder covers the whole UBJSON value grammar and is
tested against ``json.loads`` of the same model in ``tests/test_ubjson.py``.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["loads"]

# Numeric markers: struct format (big-endian) and numpy dtype.
_NUMBERS = {
    b"i": (">b", np.dtype(">i1")),
    b"U": (">B", np.dtype(">u1")),
    b"I": (">h", np.dtype(">i2")),
    b"l": (">i", np.dtype(">i4")),
    b"L": (">q", np.dtype(">i8")),
    b"d": (">f", np.dtype(">f4")),
    b"D": (">d", np.dtype(">f8")),
}
_CONSTANTS = {b"Z": None, b"T": True, b"F": False}


class _Decoder:
    def __init__(self, data: bytes):
        self.data = memoryview(data)
        self.pos = 0

    def marker(self) -> bytes:
        while True:
            m = bytes(self.data[self.pos : self.pos + 1])
            if not m:
                raise ValueError("truncated UBJSON document")
            self.pos += 1
            if m != b"N":  # no-op
                return m

    def number(self, m: bytes):
        fmt, _ = _NUMBERS[m]
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v

    def length(self) -> int:
        m = self.marker()
        if m not in _NUMBERS or m in (b"d", b"D"):
            raise ValueError(f"invalid UBJSON length marker {m!r}")
        n = self.number(m)
        if n < 0:
            raise ValueError("negative UBJSON length")
        return n

    def string(self) -> str:
        n = self.length()
        s = bytes(self.data[self.pos : self.pos + n]).decode("utf-8")
        self.pos += n
        return s

    def value(self, m: bytes | None = None):
        m = self.marker() if m is None else m
        if m in _NUMBERS:
            return self.number(m)
        if m in _CONSTANTS:
            return _CONSTANTS[m]
        if m == b"S":
            return self.string()
        if m == b"H":  # high-precision number, stored as a string
            return float(self.string())
        if m == b"C":
            c = chr(self.data[self.pos])
            self.pos += 1
            return c
        if m == b"[":
            return self.array()
        if m == b"{":
            return self.object()
        raise ValueError(f"invalid UBJSON marker {m!r} at byte {self.pos - 1}")

    def container_header(self) -> tuple[bytes | None, int | None]:
        kind, count = None, None
        if bytes(self.data[self.pos : self.pos + 1]) == b"$":
            self.pos += 1
            kind = self.marker()
        if bytes(self.data[self.pos : self.pos + 1]) == b"#":
            self.pos += 1
            count = self.length()
        elif kind is not None:
            raise ValueError("UBJSON typed container without a count")
        return kind, count

    def array(self):
        kind, count = self.container_header()
        if kind in _NUMBERS:
            dtype = _NUMBERS[kind][1]
            end = self.pos + count * dtype.itemsize
            out = np.frombuffer(self.data[self.pos : end], dtype=dtype)
            self.pos = end
            return out.astype(dtype.newbyteorder("="))
        if count is not None:
            return [self.value(kind) for _ in range(count)]
        items = []
        while (m := self.marker()) != b"]":
            items.append(self.value(m))
        return items

    def object(self) -> dict:
        kind, count = self.container_header()
        out = {}
        if count is not None:
            for _ in range(count):
                key = self.string()
                out[key] = self.value(kind)
            return out
        while self.marker() != b"}":
            self.pos -= 1  # not a no-op or the end: the key's length marker
            key = self.string()
            out[key] = self.value()
        return out


def loads(data: bytes):
    """Decode one UBJSON value; typed numeric arrays become numpy arrays."""
    dec = _Decoder(data)
    value = dec.value()
    if dec.pos != len(dec.data):
        raise ValueError("trailing bytes after the UBJSON document")
    return value
