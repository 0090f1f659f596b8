"""Caches of compiled code: object code in memory for the process, and whole programs on
disk across processes (mirrors JAX's persistent compilation cache, `jax_compilation_cache_dir`).

A key is a SHA-256 of everything the code depends on: a module's text, the options (donated
parameters, threads), the source of the compiler (the HLO passes and the backends: any change
invalidates every entry), the LLVM version, and the host CPU's name and features.

- In memory, object code is keyed on the optimized module (its name line left out, so that
  the same program under another function name hits).
- On disk, an entry is keyed on the lowered module as `jit` hands it over, so that a warm
  start skips the HLO passes as well as LLVM. Its payload (`pack_entry`) holds the object
  files (the executable's and those of the library modules it links), the key the code was
  compiled under, and a pickle of the optimized module and its `ModuleInfo`.

Before linking, `entry_problem` checks that each object file is well-formed for this host
and that the program's own object carries its code key (`key_global` compiles the key into
it), so neither garbage nor another program's code under a recomputed header is linked or
run. The pickle is read only from entries that passed `disk_cache`'s checks (private
folder, regular file, header and SHA-256).
"""
from __future__ import annotations

import collections
import ctypes
import functools
import copyreg
import hashlib
import io
import os
import pickle
import struct
import types
import threading
from pathlib import Path

import llvmlite.binding as llvm

from jaxlite.backends.cpu import llvm_target
from jaxlite.backends.cpu.disk_cache import FORMAT
from jaxlite.backends.cpu.object_file import object_file_problem

__all__ = ["cache_key", "MemoryCache", "codegen_fingerprint", "pack_objects",
           "unpack_objects", "key_global", "linked_key_matches", "payload_problem",
           "pack_entry", "unpack_entry", "entry_problem", "load_program", "KEY_SYMBOL"]

# The global holding a program's cache key inside its object code.
KEY_SYMBOL = "jl_cache_key"


@functools.lru_cache(maxsize=None)
def codegen_fingerprint() -> str:
    """A digest of the source of the compiler: the HLO passes (`jaxlite/xla`, which make the
    optimized module a lowered module's entry holds) and the backends (code generators,
    math library, GEMM). os.walk, not Path.rglob: this runs on every warm start."""
    digest = hashlib.sha256()
    package = Path(__file__).parents[2]
    for part in ("xla", "backends"):
        for folder, subfolders, files in os.walk(package / part):
            subfolders.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    digest.update(os.path.relpath(path, package).encode())
                    with open(path, "rb") as source:
                        digest.update(source.read())
    return digest.hexdigest()


def _module_text_without_name(text: str) -> str:
    first, _, rest = text.partition("\n")
    if first.startswith("HloModule "):
        parts = first.split(",", 1)
        first = "HloModule _" + ("," + parts[1] if len(parts) > 1 else "")
    return first + "\n" + rest


def cache_key(module_text: str, options: object, keep_name: bool = False) -> bytes:
    """The 32-byte key of a module's compiled code on this host; `options` (a repr-able
    value) holds whatever else the code depends on. The module's name is left out (the same
    program under another function name hits) unless `keep_name`: an entry keyed on the
    lowered module holds the optimized module, which carries its name."""
    cpu, features = llvm_target.host_cpu()
    digest = hashlib.sha256()
    text = module_text if keep_name else _module_text_without_name(module_text)
    for part in (f"format {FORMAT}", codegen_fingerprint(),
                 ".".join(map(str, llvm.llvm_version_info)), cpu, features,
                 repr(options), text):
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


def key_global(key: bytes, symbol: str = KEY_SYMBOL) -> str:
    """LLVM IR defining `symbol` (`KEY_SYMBOL`), the key compiled into the program's own
    object code: an entry holding another program's code (even under a recomputed header)
    cannot pass `payload_problem` or `linked_key_matches`."""
    data = "".join(f"\\{byte:02X}" for byte in key)
    return f'\n@"{symbol}" = constant [{len(key)} x i8] c"{data}", align 1\n'


def linked_key_matches(address: int, key: bytes) -> bool:
    """Whether the linked `KEY_SYMBOL` at `address` holds `key`."""
    return bool(address) and ctypes.string_at(address, len(key)) == key


def payload_problem(payload: bytes, key: bytes) -> str:
    """What is wrong with a payload of object files for `key` ("" when nothing): they must
    be well-formed object files for this host, the first compiled for `key`. Checked before
    linking, because the linker trusts its input."""
    objects = unpack_objects(payload)
    if objects is None:
        return "its object files are not packed as jaxlite packs them"
    return _objects_problem(objects, key)


def _frozen_mapping(items: dict) -> types.MappingProxyType:
    return types.MappingProxyType(items)


def pack_entry(entry_key: bytes, code_key: bytes, program: object,
               objects: list[bytes]) -> bytes | None:
    """A persistent entry's payload: the object files, then `entry_key` (the entry's own),
    `code_key` (the key the code was compiled under, `key_global`) and a pickle of `program`
    (what the executable needs besides the code: the optimized module and its `ModuleInfo`).
    None when `program` cannot be pickled.

    Unpickling runs code named by the data, which is why `disk_cache` reads entries only
    from a private folder and checks each one's SHA-256 first: the same trust the object
    code, which the process runs, needs anyway."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = copyreg.dispatch_table.copy()  # type: ignore[attr-defined]
    pickler.dispatch_table[types.MappingProxyType] = (  # type: ignore[attr-defined]
        lambda mapping: (_frozen_mapping, (dict(mapping),)))
    try:
        pickler.dump(program)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None
    return pack_objects(list(objects) + [entry_key + code_key + buffer.getvalue()])


def unpack_entry(payload: bytes) -> tuple[bytes, bytes, bytes, list[bytes]] | None:
    """(entry key, code key, pickled program, object files) of `pack_entry`'s payload, or
    None."""
    parts = unpack_objects(payload)
    if parts is None or len(parts) < 2 or len(parts[-1]) <= 64:
        return None
    return parts[-1][:32], parts[-1][32:64], parts[-1][64:], parts[:-1]


def entry_problem(payload: bytes, entry_key: bytes) -> str:
    """What is wrong with the payload of the entry for `entry_key` ("" when nothing): it
    must name that key (another entry's payload under a recomputed header does not), and
    its object files must pass `payload_problem`'s checks for the code key it names."""
    unpacked = unpack_entry(payload)
    if unpacked is None:
        return "it is not packed as jaxlite packs entries"
    stored_key, code_key, _, objects = unpacked
    if stored_key != entry_key:
        return "it holds another program (its payload names another key)"
    return _objects_problem(objects, code_key)


def load_program(blob: bytes) -> object:
    """The program `pack_entry` pickled (raises on a damaged blob)."""
    return pickle.loads(blob)


def _objects_problem(objects: list[bytes], key: bytes) -> str:
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
