"""The persistent compilation cache's files: what an entry holds, how it is read and written,
and which folders are trusted (mirrors JAX's persistent cache, `jax_compilation_cache_dir`).

An entry is machine code that the process will run, so it is treated as such:
- The folder must belong to this user and be writable by nobody else (as ssh and pip
  require of their private folders); jaxlite creates it with mode 0700. Any other folder is
  refused with a warning, and an unwritable one is reported rather than silently unused.
- An entry is opened without following symlinks and without blocking (a FIFO would hang a
  plain open), must be a regular file of this user no larger than `MAX_ENTRY_BYTES`, and
  must carry a header that names this format, this jaxlite, LLVM, target triple, CPU and
  CPU features, and the full 32-byte key, with a SHA-256 of everything after it.
- The caller checks the payload itself (`check` below): the client verifies that it holds
  well-formed object code for this host, compiled for the key it names (the key is compiled
  into the code), and a program it can read.
- An entry that fails any check is logged, removed and recompiled; writes go to a private
  temporary file that is renamed into place, so no reader ever sees half an entry.
"""
from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import stat
import struct
import tempfile
from pathlib import Path
from typing import Callable

import llvmlite.binding as llvm

from jaxlite.errors import warn_at_user
from jaxlite import _jax_options  # noqa: F401  (defines jax_enable_compilation_cache)
from jaxlite.backends.cpu import llvm_target
from jaxlite.config import config
from jaxlite.version import __version__

__all__ = ["MAGIC", "FORMAT", "SUFFIX", "MAX_ENTRY_BYTES", "cache_folder", "entry_identity",
           "entry_path", "folder_status", "read_entry", "write_entry", "encode_entry"]

logger = logging.getLogger("jaxlite")

MAGIC = b"JAXLITE-CPU-OBJ\x00"
FORMAT = 4
SUFFIX = ".jlobj"
# Far above any program's object code (a large model's is a few MB); a bigger file is not ours.
MAX_ENTRY_BYTES = 256 << 20
# format version, identity length, payload length, key, SHA-256 of identity and payload
_HEADER = struct.Struct("<IIQ32s32s")
_START = len(MAGIC) + _HEADER.size


@functools.lru_cache(maxsize=None)
def entry_identity() -> bytes:
    """What an entry's code was compiled by and for, as stored in its header (JSON)."""
    cpu, features = llvm_target.host_cpu()
    return json.dumps({"jaxlite": __version__, "format": FORMAT,
                       "llvm": ".".join(map(str, llvm.llvm_version_info)),
                       "triple": llvm.get_default_triple(), "cpu": cpu,
                       "features": features}, sort_keys=True).encode()


def cache_folder() -> str | None:
    """The persistent cache's folder: `jax_compilation_cache_dir` (JAXLITE_/
    JAX_COMPILATION_CACHE_DIR), else the per-user default (`jaxlite_default_cache_dir`:
    $XDG_CACHE_HOME/jaxlite or ~/.cache/jaxlite); None when the cache is off (an empty
    folder name, or `jax_enable_compilation_cache` False)."""
    if not config.read("jax_enable_compilation_cache"):
        return None
    folder = config.read("jax_compilation_cache_dir")
    if folder is None:
        folder = config.read("jaxlite_default_cache_dir")
    return folder or None


def _digest(key: bytes, identity: bytes, payload: bytes) -> bytes:
    digest = hashlib.sha256(key)
    digest.update(identity)
    digest.update(payload)
    return digest.digest()


def encode_entry(key: bytes, payload: bytes) -> bytes:
    """The bytes of the entry file holding `payload` under `key`."""
    identity = entry_identity()
    header = _HEADER.pack(FORMAT, len(identity), len(payload), key,
                          _digest(key, identity, payload))
    return MAGIC + header + identity + payload


def _decode_entry(data: bytes, key: bytes) -> tuple[bytes | None, str]:
    """(payload, "") when `data` is a valid entry for `key`, else (None, what is wrong)."""
    if len(data) < _START or data[:len(MAGIC)] != MAGIC:
        return None, "not a jaxlite cache entry (bad magic or too short)"
    version, identity_length, payload_length, stored_key, digest = _HEADER.unpack_from(
        data, len(MAGIC))
    if version != FORMAT:
        return None, f"format {version}, this jaxlite reads format {FORMAT}"
    if stored_key != key:
        return None, "it holds another program's code (key mismatch)"
    identity = data[_START:_START + identity_length]
    if identity != entry_identity():
        return None, "compiled by another jaxlite, LLVM or for another CPU"
    payload = data[_START + identity_length:]
    if len(payload) != payload_length:
        return None, f"truncated or padded ({len(payload)} of {payload_length} bytes)"
    if _digest(key, identity, payload) != digest:
        return None, "its checksum does not match its content"
    return payload, ""


def _is_posix() -> bool:
    return hasattr(os, "geteuid")


def folder_status(folder: str) -> tuple[bool, bool]:
    """(may read, may write) the cache folder `folder`, creating it private (0700) when
    missing; a folder that is refused or unwritable is reported with a warning."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.stat(folder)
    except OSError as error:
        _warn(folder, f"it cannot be created ({error.strerror})")
        return False, False
    if not stat.S_ISDIR(info.st_mode):
        _warn(folder, "it is not a folder")
        return False, False
    if _is_posix() and info.st_uid != os.geteuid():
        _warn(folder, f"it belongs to another user (uid {info.st_uid}); anyone who can "
                      "write there could make this process run their code")
        return False, False
    if _is_posix() and info.st_mode & 0o022:
        _warn(folder, f"other users may write to it (mode {stat.S_IMODE(info.st_mode):o}); "
                      f"make it private with `chmod 700 {folder}`")
        return False, False
    if not os.access(folder, os.W_OK | os.X_OK):
        _warn(folder, "it is not writable: entries are read but new programs are not stored")
        return True, False
    return True, True


def _warn(folder: str, reason: str) -> None:
    # The message names the folder, so Python's default filter shows it once per folder.
    warn_at_user(f"jaxlite: the compilation cache folder {folder!r} is not used: {reason}.",
                  UserWarning)


def entry_path(folder: str, key: bytes) -> Path:
    """The file of the entry for `key` in `folder`."""
    return Path(folder) / f"{key.hex()}{SUFFIX}"


def _open_flags() -> int:
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    # O_NOFOLLOW: a symlink is refused, not followed; O_NONBLOCK: a FIFO cannot hang open().
    return flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _read_regular_file(path: Path) -> tuple[bytes | None, str]:
    """The file's bytes, or (None, why it was refused); (None, "") when it does not exist."""
    try:
        fd = os.open(path, _open_flags())
    except FileNotFoundError:
        return None, ""
    except OSError as error:
        return None, f"it cannot be opened as a plain file ({error.strerror})"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, "it is not a regular file"
        if _is_posix() and info.st_uid != os.geteuid():
            return None, f"it belongs to another user (uid {info.st_uid})"
        if info.st_size > MAX_ENTRY_BYTES:
            return None, f"it is larger than {MAX_ENTRY_BYTES} bytes"
        chunks, remaining = [], MAX_ENTRY_BYTES + 1
        while remaining and (chunk := os.read(fd, min(remaining, 1 << 20))):
            chunks.append(chunk)
            remaining -= len(chunk)
        if not remaining:
            return None, f"it is larger than {MAX_ENTRY_BYTES} bytes"
        return b"".join(chunks), ""
    except OSError as error:
        return None, f"it cannot be read ({error.strerror})"
    finally:
        os.close(fd)


def read_entry(folder: str, key: bytes,
               check: Callable[[bytes], str] = lambda payload: "") -> bytes | None:
    """The payload stored under `key` in `folder`, or None. A present entry that fails a
    check (the file's, the header's, or `check(payload)`, which returns what is wrong or
    "") is logged and removed, so that the caller recompiles and stores a good one."""
    path = entry_path(folder, key)
    data, problem = _read_regular_file(path)
    payload = None
    if data is not None:
        payload, problem = _decode_entry(data, key)
    if payload is not None:
        problem = check(payload)
    if problem:
        remove_entry(path, problem)
        return None
    return payload


def remove_entry(path: Path | str, problem: str) -> None:
    """Log why the entry at `path` is not used and delete it (the link, never its target)."""
    logger.warning("jaxlite: compilation cache entry %s is not used: %s; it is removed and "
                   "the program recompiled.", path, problem)
    try:
        os.unlink(path)
    except OSError:
        pass


def write_entry(folder: str, key: bytes, payload: bytes) -> None:
    """Store `payload` under `key`: a private (0600) temporary file renamed into place."""
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    except OSError as error:
        _warn(folder, f"an entry cannot be written there ({error.strerror})")
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(encode_entry(key, payload))
        os.replace(temporary, entry_path(folder, key))
    except OSError as error:
        _warn(folder, f"an entry cannot be written there ({error.strerror})")
        try:
            os.unlink(temporary)
        except OSError:
            pass

