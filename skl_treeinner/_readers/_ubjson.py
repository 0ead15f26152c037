"""A minimal Universal Binary JSON decoder for XGBoost models.

Why hand-written: reading a 500-tree model through ``save_raw("json")`` and
``json.loads`` takes about as long as routing 10,000 rows through it, because
every node statistic becomes a Python float. XGBoost's binary format
(``save_raw("ubj")``, UBJSON draft 12) stores each per-tree vector as one
*typed array*, which this decoder returns as a numpy array in a single
``np.frombuffer`` call: about 10 times faster. The only maintained-looking
alternative on PyPI (py-ubjson, last released 2020) returns Python lists, so
it would not help. The decoder covers the whole UBJSON value grammar and is
tested against ``json.loads`` of the same model in ``tests/unit/test_ubjson.py``.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["loads"]

# Numeric markers (as byte values): big-endian struct and numpy dtype.
_NUMBERS = {
    ord(marker): (struct.Struct(fmt), np.dtype(fmt))
    for marker, fmt in {
        "i": ">b",
        "U": ">B",
        "I": ">h",
        "l": ">i",
        "L": ">q",
        "d": ">f",
        "D": ">d",
    }.items()
}
_LENGTHS = {m: v for m, v in _NUMBERS.items() if chr(m) not in "dD"}
_CONSTANTS = {ord("Z"): None, ord("T"): True, ord("F"): False}
_NOOP, _STRING, _HIGH, _CHAR = ord("N"), ord("S"), ord("H"), ord("C")
_ARRAY, _ARRAY_END, _OBJECT, _OBJECT_END = ord("["), ord("]"), ord("{"), ord("}")
_TYPE, _COUNT = ord("$"), ord("#")


class _Decoder:
    # Markers are handled as ints (indexing bytes gives an int): a bytes
    # object per marker made parsing several times slower.
    def __init__(self, data: bytes):
        self.data = bytes(data)
        self.pos = 0

    def marker(self) -> int:
        data, pos = self.data, self.pos
        while True:
            if pos >= len(data):
                raise ValueError("truncated UBJSON document")
            m = data[pos]
            pos += 1
            if m != _NOOP:
                self.pos = pos
                return m

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def number(self, m: int):
        st = _NUMBERS[m][0]
        (v,) = st.unpack_from(self.data, self.pos)
        self.pos += st.size
        return v

    def length(self) -> int:
        m = self.marker()
        if m not in _LENGTHS:
            raise ValueError(f"invalid UBJSON length marker {bytes([m])!r}")
        n = self.number(m)
        if n < 0:
            raise ValueError("negative UBJSON length")
        return n

    def string(self) -> str:
        n = self.length()
        end = self.pos + n
        if end > len(self.data):
            raise ValueError("truncated UBJSON document")
        s = self.data[self.pos : end].decode("utf-8")
        self.pos = end
        return s

    def value(self, m: int | None = None):
        m = self.marker() if m is None else m
        if m in _NUMBERS:
            return self.number(m)
        if m in _CONSTANTS:
            return _CONSTANTS[m]
        if m == _STRING:
            return self.string()
        if m == _HIGH:  # high-precision number, stored as a string
            return float(self.string())
        if m == _CHAR:
            c = chr(self.data[self.pos])
            self.pos += 1
            return c
        if m == _ARRAY:
            return self.array()
        if m == _OBJECT:
            return self.object()
        raise ValueError(f"invalid UBJSON marker {bytes([m])!r} at byte {self.pos - 1}")

    def container_header(self) -> tuple[int | None, int | None]:
        kind, count = None, None
        if self.peek() == _TYPE:
            self.pos += 1
            kind = self.marker()
        if self.peek() == _COUNT:
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
            if end > len(self.data):
                raise ValueError("truncated UBJSON document")
            out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos)
            self.pos = end
            return out.astype(dtype.newbyteorder("="))
        if count is not None:
            return [self.value(kind) for _ in range(count)]
        items = []
        while (m := self.marker()) != _ARRAY_END:
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
        while self.marker() != _OBJECT_END:
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
