"""The device memory profile: live arrays as a gzipped pprof profile (the format of
`jax.profiler.device_memory_profile`, which `pprof` and its web UI read).

JAX's profile has one sample per allocation site, the Python stack that made the buffer as
its location, and the values (allocations, space in bytes). jaxlite does not record where
arrays are made, so its samples group the live arrays by dtype and shape instead: each
sample's location is one frame named like `float32[64,64]`, its values the number of such
arrays and their bytes, and its labels JAX's `kind=buffer` and `device`. `pprof -top`
then lists memory by array type. Arrays that share memory (views) each count their bytes.

The encoder writes protobuf's wire format by hand (varints and length-delimited fields):
the message fields used are those of pprof's `profile.proto`.
"""
from __future__ import annotations

import collections
import gzip
from typing import Iterable

import numpy as np

__all__ = ["memory_profile"]

# Field numbers of profile.proto's messages.
_PROFILE_SAMPLE_TYPE, _PROFILE_SAMPLE, _PROFILE_LOCATION = 1, 2, 4
_PROFILE_FUNCTION, _PROFILE_STRINGS = 5, 6
_VALUE_TYPE, _VALUE_UNIT = 1, 2
_SAMPLE_LOCATIONS, _SAMPLE_VALUES, _SAMPLE_LABEL = 1, 2, 3
_LABEL_KEY, _LABEL_STR = 1, 2
_LOCATION_ID, _LOCATION_LINE = 1, 4
_LINE_FUNCTION = 1
_FUNCTION_ID, _FUNCTION_NAME, _FUNCTION_SYSTEM_NAME = 1, 2, 3


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def _number(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _packed(field: int, values: Iterable[int]) -> bytes:
    return _bytes(field, b"".join(_varint(v) for v in values))


class _Strings:
    """pprof's string table: index 0 is the empty string."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {"": 0}

    def __call__(self, text: str) -> int:
        return self.index.setdefault(text, len(self.index))

    def encode(self) -> bytes:
        return b"".join(_bytes(_PROFILE_STRINGS, s.encode("utf-8")) for s in self.index)


def _type_name(array: np.ndarray) -> str:
    return f"{array.dtype.name}[{','.join(map(str, array.shape))}]"


def memory_profile(arrays: Iterable[np.ndarray], device: str) -> bytes:
    """The gzipped pprof profile of `arrays` (their numpy values), held by `device`."""
    groups: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for array in arrays:
        group = groups[_type_name(array)]
        group[0] += 1
        group[1] += array.nbytes
    strings = _Strings()
    body = _bytes(_PROFILE_SAMPLE_TYPE, _number(_VALUE_TYPE, strings("allocations"))
                  + _number(_VALUE_UNIT, strings("count")))
    body += _bytes(_PROFILE_SAMPLE_TYPE, _number(_VALUE_TYPE, strings("space"))
                   + _number(_VALUE_UNIT, strings("bytes")))
    labels = (_bytes(_SAMPLE_LABEL, _number(_LABEL_KEY, strings("kind"))
                     + _number(_LABEL_STR, strings("buffer")))
              + _bytes(_SAMPLE_LABEL, _number(_LABEL_KEY, strings("device"))
                       + _number(_LABEL_STR, strings(device))))
    ordered = sorted(groups.items(), key=lambda item: -item[1][1])
    for ident, (name, (count, size)) in enumerate(ordered, 1):
        body += _bytes(_PROFILE_SAMPLE, _packed(_SAMPLE_LOCATIONS, [ident])
                       + _packed(_SAMPLE_VALUES, [count, size]) + labels)
    for ident, (name, _) in enumerate(ordered, 1):
        body += _bytes(_PROFILE_LOCATION, _number(_LOCATION_ID, ident) + _bytes(
            _LOCATION_LINE, _number(_LINE_FUNCTION, ident)))
        body += _bytes(_PROFILE_FUNCTION, _number(_FUNCTION_ID, ident)
                       + _number(_FUNCTION_NAME, strings(name))
                       + _number(_FUNCTION_SYSTEM_NAME, strings(name)))
    return gzip.compress(body + strings.encode())
