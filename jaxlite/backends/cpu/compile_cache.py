"""Caches of compiled object code: in memory for the process, and on disk across processes
(mirrors JAX's persistent compilation cache, `jax_compilation_cache_dir`).

The key is a SHA-256 of everything the machine code depends on: the optimized module's text
(its name line left out, so that the same program under another function name hits), the
donated parameters, the source of this backend's code generators (any change to them
invalidates every entry), the LLVM version, and the host CPU's name and features.

The payload of a disk entry (`disk_cache` writes and checks the files) is the object code
(`pack_objects`: the executable's object file and those of the library modules it links).
Nothing is unpickled and nothing is trusted: before linking, `payload_problem` checks that
each object file is well-formed for this host and that the program's own object carries its
key (`key_global` compiles the key into it), so neither garbage nor another program's code
under a recomputed header is linked or run.
"""
from __future__ import annotations

import collections
import ctypes
import functools
import hashlib
import struct
import threading
from pathlib import Path

import llvmlite.binding as llvm

from jaxlite.backends.cpu import llvm_target
from jaxlite.backends.cpu.disk_cache import FORMAT
from jaxlite.backends.cpu.object_file import object_file_problem

__all__ = ["cache_key", "MemoryCache", "codegen_fingerprint", "pack_objects",
           "unpack_objects", "key_global", "linked_key_matches", "payload_problem",
           "KEY_SYMBOL"]

# The global holding a program's cache key inside its object code.
KEY_SYMBOL = "jl_cache_key"


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


def key_global(key: bytes) -> str:
    """LLVM IR defining `KEY_SYMBOL`, the key compiled into the program's own object code:
    an entry holding another program's code (even under a recomputed header) cannot pass
    `payload_problem` or `linked_key_matches`."""
    data = "".join(f"\\{byte:02X}" for byte in key)
    return f'\n@{KEY_SYMBOL} = constant [{len(key)} x i8] c"{data}", align 1\n'


def linked_key_matches(address: int, key: bytes) -> bool:
    """Whether the linked `KEY_SYMBOL` at `address` holds `key`."""
    return bool(address) and ctypes.string_at(address, len(key)) == key


def payload_problem(payload: bytes, key: bytes) -> str:
    """What is wrong with a payload read from disk for `key` ("" when nothing): it must be
    well-formed object files for this host, the first compiled for `key`. Checked before
    linking, because the linker trusts its input."""
    objects = unpack_objects(payload)
    if objects is None:
        return "its object files are not packed as jaxlite packs them"
    for code in objects:
        problem = object_file_problem(code)
        if problem:
            return problem
    if key not in objects[0]:
        return "its code was compiled for another program"
    return ""


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
