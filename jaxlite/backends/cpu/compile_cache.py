"""Caches of compiled object code: in memory for the process, and on disk across processes
(mirrors JAX's persistent compilation cache, `jax_compilation_cache_dir`).

The key is a SHA-256 of everything the machine code depends on: the optimized module's text
(its name line left out, so that the same program under another function name hits), the
donated parameters, the source of this backend's code generators (any change to them
invalidates every entry), the LLVM version, and the host CPU's name and features.

A disk entry is one file, `<key>.jlobj`: a fixed header (magic, format version, the key,
the payload's length and its SHA-256), then the object code (`pack_objects`: the
executable's object file and those of the library modules it links). Nothing is unpickled and
nothing is trusted: an entry whose header, key, length or checksum does not match is
ignored (and overwritten by the recompiled code), so a corrupt, truncated or foreign file is
never executed. Files are written to a temporary name and renamed, so a reader never sees a
partial entry.
"""
from __future__ import annotations

import collections
import functools
import hashlib
import os
import struct
import tempfile
import threading
from pathlib import Path

import llvmlite.binding as llvm

from jaxlite.backends.cpu import llvm_target

__all__ = ["cache_key", "read_entry", "write_entry", "MemoryCache", "codegen_fingerprint",
           "pack_objects", "unpack_objects", "MAGIC", "FORMAT", "SUFFIX"]

MAGIC = b"JAXLITE-CPU-OBJ\x00"
FORMAT = 2
SUFFIX = ".jlobj"
# format version, key, payload length, payload SHA-256
_HEADER = struct.Struct("<I32sQ32s")


@functools.lru_cache(maxsize=None)
def codegen_fingerprint() -> str:
    """A digest of the source of the CPU backend (code generators, math library, GEMM)."""
    digest = hashlib.sha256()
    root = Path(__file__).parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _module_text_without_name(text: str) -> str:
    first, _, rest = text.partition("\n")
    if first.startswith("HloModule "):
        parts = first.split(",", 1)
        first = "HloModule _" + ("," + parts[1] if len(parts) > 1 else "")
    return first + "\n" + rest


def cache_key(module_text: str, options: object) -> bytes:
    """The 32-byte key of an optimized module's object code on this host; `options` (a
    repr-able value) holds whatever else the code depends on."""
    cpu, features = llvm_target.host_cpu()
    digest = hashlib.sha256()
    for part in (f"format {FORMAT}", codegen_fingerprint(),
                 ".".join(map(str, llvm.llvm_version_info)), cpu, features,
                 repr(options), _module_text_without_name(module_text)):
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.digest()


def _path(folder: str, key: bytes) -> Path:
    return Path(folder) / f"{key.hex()}{SUFFIX}"


def pack_objects(objects: list[bytes]) -> bytes:
    """Several object files as one payload: their count, their lengths, their bytes."""
    return struct.pack(f"<I{len(objects)}Q", len(objects), *map(len, objects)) + b"".join(
        objects)


def unpack_objects(payload: bytes) -> list[bytes] | None:
    """The object files of `pack_objects`' payload, or None when it is malformed."""
    if len(payload) < 4:
        return None
    (count,) = struct.unpack_from("<I", payload)
    start = 4 + 8 * count
    if count == 0 or len(payload) < start:
        return None
    lengths = struct.unpack_from(f"<{count}Q", payload, 4)
    if start + sum(lengths) != len(payload):
        return None
    objects = []
    for length in lengths:
        objects.append(payload[start:start + length])
        start += length
    return objects


def read_entry(folder: str, key: bytes) -> bytes | None:
    """The object code stored under `key`, or None when absent or not valid."""
    try:
        data = _path(folder, key).read_bytes()
    except OSError:
        return None
    start = len(MAGIC) + _HEADER.size
    if len(data) < start or data[:len(MAGIC)] != MAGIC:
        return None
    version, stored_key, length, checksum = _HEADER.unpack_from(data, len(MAGIC))
    payload = data[start:]
    if version != FORMAT or stored_key != key or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != checksum:
        return None
    return payload


def write_entry(folder: str, key: bytes, payload: bytes) -> None:
    """Store `payload` under `key` (atomically; errors are ignored: a cache is optional)."""
    header = MAGIC + _HEADER.pack(FORMAT, key, len(payload), hashlib.sha256(payload).digest())
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(header + payload)
        os.replace(tmp, _path(folder, key))
    except OSError:
        return


class MemoryCache:
    """Object code by key for this process (least recently used entries dropped)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._entries: collections.OrderedDict[bytes, bytes] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: bytes) -> bytes | None:
        with self._lock:
            payload = self._entries.get(key)
            if payload is not None:
                self._entries.move_to_end(key)
            return payload

    def put(self, key: bytes, payload: bytes) -> None:
        with self._lock:
            self._entries[key] = payload
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
