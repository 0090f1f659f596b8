"""The compile caches of the cpu backend: object code in memory and whole programs on disk,
and the disk cache treated as code that runs (issue 11): every damaged, planted or foreign
entry is logged, removed and recompiled, never linked; only private folders and regular
files are used; writes are atomic. The persistent cache is on by default in a per-user
folder, honours JAXLITE_/JAX_COMPILATION_CACHE_DIR, and a hit skips the HLO passes and LLVM
(issue 12).
"""
from __future__ import annotations

import hashlib
import logging
import os
import stat
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import jaxlite

from cpu_testing import cpu_client, module, run_cpu
from jaxlite.backends.cpu import compile_cache, disk_cache, native
from jaxlite.backends.cpu.client import OBJECT_CACHE
from jaxlite.backends.cpu.object_file import object_file_problem
from jaxlite.backends.base import CompileOptions
from jaxlite.config import config

X = np.arange(33, dtype=np.float32)
# The runtime module's object code is cached too, once per process: into the session's
# folder (tests/conftest.py), so that each test's folder holds its program's entry alone.
native._install_symbols()


def _fresh_module(tag: float) -> object:
    return module(f"""
    %x = f32[33] parameter(0)
    %c = f32[] constant({tag})
    %b = f32[33] broadcast(%c), dimensions={{}}
    ROOT %y = f32[33] multiply(%x, %b)
    """)


def _compile_into(folder, tag: float) -> np.ndarray:
    """Run the module tagged `tag` with `folder` as the persistent cache, memory cache
    cleared first, so the disk entry is what is looked up."""
    with config.override("jax_compilation_cache_dir", str(folder)):
        OBJECT_CACHE.clear()
        return run_cpu(_fresh_module(tag), [X])[0]


def _entry(folder):
    (entry,) = folder.glob(f"*{disk_cache.SUFFIX}")
    return entry


def _compiles() -> int:
    return cpu_client().stats["llvm_compiles"]


def test_object_code_is_cached_in_memory_and_on_disk(tmp_path):
    client = cpu_client()
    before = dict(client.stats)
    first = _compile_into(tmp_path, 1.2345)
    assert client.stats["llvm_compiles"] == before.get("llvm_compiles", 0) + 1
    assert stat.S_IMODE(_entry(tmp_path).stat().st_mode) == 0o600
    # the same optimized program reached from another lowered module: the memory cache
    with config.override("jax_compilation_cache_dir", ""):
        run_cpu(_fresh_module(1.2345), [X])
    assert client.stats["memory_hits"] == before.get("memory_hits", 0) + 1
    # the lowered module again: the disk entry, found before the passes
    optimizations = client.stats["optimizations"]
    np.testing.assert_array_equal(_compile_into(tmp_path, 1.2345), first)
    assert client.stats["disk_hits"] == before.get("disk_hits", 0) + 1
    assert client.stats["llvm_compiles"] == before.get("llvm_compiles", 0) + 1
    assert client.stats["optimizations"] == optimizations
    np.testing.assert_array_equal(first, X * np.float32(1.2345))


def _flip(data: bytearray, index: int) -> bytes:
    data[index] ^= 0xFF
    return bytes(data)


def _other_program_entry(tmp_path, key: bytes) -> bytes:
    """Another program's object code under `key` with a valid, recomputed header."""
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    _compile_into(other, 99.0)
    foreign = _entry(other).read_bytes()
    payload = foreign[-len(foreign) + len(disk_cache.MAGIC) + disk_cache._HEADER.size
                      + len(disk_cache.entry_identity()):]
    return disk_cache.encode_entry(key, payload)


def _unreadable_program_entry(key: bytes, good_payload: bytes) -> bytes:
    """Valid object code and keys under a valid header, but a program blob that is no
    pickle."""
    entry_key, code_key, blob, objects = compile_cache.unpack_entry(good_payload)
    return disk_cache.encode_entry(key, compile_cache.pack_objects(
        objects + [entry_key + code_key + b"\x80\x05garbage" + blob[-20:]]))


def _garbage_object_entry(key: bytes) -> bytes:
    """A valid header and checksum over bytes that are no object file (they even hold the
    key, so only the object-file check stands between them and the linker)."""
    return disk_cache.encode_entry(key, compile_cache.pack_objects([b"\x00" * 512 + key]))


def _elf_with_section_outside(key: bytes, good_payload: bytes) -> bytes:
    objects = compile_cache.unpack_objects(good_payload)
    code = bytearray(objects[0])
    shoff = int.from_bytes(code[0x28:0x30], "little")
    # the first section with content (index 1) now claims to start past the file's end
    start = shoff + 64 + 0x18
    code[start:start + 8] = (len(code) + 4096).to_bytes(8, "little")
    return disk_cache.encode_entry(key, compile_cache.pack_objects([bytes(code)] + objects[1:]))


DAMAGE = {
    "payload byte": lambda data, key, tmp: _flip(bytearray(data), -10),
    "magic byte": lambda data, key, tmp: _flip(bytearray(data), 3),
    "format version": lambda data, key, tmp: _flip(bytearray(data), len(disk_cache.MAGIC)),
    "stored key": lambda data, key, tmp: _flip(bytearray(data), len(disk_cache.MAGIC) + 20),
    "identity": lambda data, key, tmp: data.replace(b'"cpu"', b'"CPU"'),
    "truncated": lambda data, key, tmp: data[:len(data) // 2],
    "padded": lambda data, key, tmp: data + b"\x00" * 16,
    "empty": lambda data, key, tmp: b"",
    "foreign file": lambda data, key, tmp: b"#!/bin/sh\necho hi\n" * 100,
    "other program, recomputed header": lambda data, key, tmp: _other_program_entry(tmp, key),
    "garbage object code, valid header": lambda data, key, tmp: _garbage_object_entry(key),
    "unreadable program, valid header": lambda data, key, tmp: _unreadable_program_entry(
        key, disk_cache._decode_entry(data, key)[0]),
    "ELF section outside the file": lambda data, key, tmp: _elf_with_section_outside(
        key, disk_cache._decode_entry(data, key)[0]),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_bad_entries_are_logged_removed_and_recompiled(tmp_path, damage, caplog):
    tag = 2.5 + sorted(DAMAGE).index(damage)
    cache = tmp_path / "cache"
    _compile_into(cache, tag)
    entry = _entry(cache)
    data = entry.read_bytes()
    key = bytes.fromhex(entry.name[:-len(disk_cache.SUFFIX)])
    entry.write_bytes(DAMAGE[damage](data, key, tmp_path))
    compiles = _compiles()
    with caplog.at_level(logging.WARNING, logger="jaxlite"):
        np.testing.assert_array_equal(_compile_into(cache, tag), X * np.float32(tag))
    assert _compiles() == compiles + 1
    assert any("is not used" in r.getMessage() and entry.name in r.getMessage()
               for r in caplog.records)
    # removed, and replaced by the recompiled program's good entry
    assert entry.read_bytes() == data


def test_only_the_program_compiled_for_a_key_passes_the_payload_check(tmp_path):
    _compile_into(tmp_path, 7.25)
    entry = _entry(tmp_path)
    key = bytes.fromhex(entry.name[:-len(disk_cache.SUFFIX)])
    payload, problem = disk_cache._decode_entry(entry.read_bytes(), key)
    assert problem == "" and compile_cache.entry_problem(payload, key) == ""
    other_key = hashlib.sha256(b"another program").digest()
    assert "another key" in compile_cache.entry_problem(payload, other_key)
    _, code_key, _, objects = compile_cache.unpack_entry(payload)
    objects_payload = compile_cache.pack_objects(objects)
    assert compile_cache.payload_problem(objects_payload, code_key) == ""
    assert "another program" in compile_cache.payload_problem(objects_payload, other_key)
    assert object_file_problem(b"\x7fELF") == "its ELF header is truncated"
    assert object_file_problem(b"MZ" + bytes(100)) != ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_as_entry_does_not_hang(tmp_path):
    # In a child process, so that a regression hangs the child, not the test session.
    script = f"""
import os, numpy as np, jaxlite as jax, jaxlite.numpy as jnp
from jaxlite.backends.cpu import disk_cache, native
native._install_symbols()  # the runtime's entry: in the session's folder
folder = {str(tmp_path)!r}
jax.config.update("jax_compilation_cache_dir", folder)
# Both programs from one line: the entry's key holds their metadata (source lines).
make = lambda: jax.jit(lambda x: x * 3.5)
f = make()
f(np.ones(5, np.float32))
(entry,) = [n for n in os.listdir(folder) if n.endswith(disk_cache.SUFFIX)]
os.unlink(os.path.join(folder, entry))
os.mkfifo(os.path.join(folder, entry))
jax.clear_caches()
from jaxlite.backends.cpu.client import OBJECT_CACHE
OBJECT_CACHE.clear()
g = make()
print(float(g(np.ones(5, np.float32))[0]))
print(os.path.isfile(os.path.join(folder, entry)))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3.5", "True"]
    assert "is not a regular file" in result.stderr


@pytest.mark.parametrize("target", ["/dev/zero", "valid entry elsewhere"])
def test_symlinked_entries_are_not_followed(tmp_path, target, caplog):
    cache = tmp_path / "cache"
    tag = 11.0 if target == "/dev/zero" else 12.0
    _compile_into(cache, tag)
    entry = _entry(cache)
    if target == "/dev/zero":
        pointee = "/dev/zero"
    else:
        pointee = tmp_path / "elsewhere"
        pointee.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(pointee)
    compiles = _compiles()
    with caplog.at_level(logging.WARNING, logger="jaxlite"):
        np.testing.assert_array_equal(_compile_into(cache, tag), X * np.float32(tag))
    assert _compiles() == compiles + 1
    assert not entry.is_symlink() and entry.is_file()
    assert any("plain file" in r.getMessage() for r in caplog.records)


def test_an_oversized_entry_is_refused_without_reading_it(tmp_path, caplog):
    _compile_into(tmp_path, 13.0)
    entry = _entry(tmp_path)
    with open(entry, "r+b") as handle:  # sparse: no disk space is used
        handle.truncate(disk_cache.MAX_ENTRY_BYTES + 1)
    compiles = _compiles()
    with caplog.at_level(logging.WARNING, logger="jaxlite"):
        np.testing.assert_array_equal(_compile_into(tmp_path, 13.0), X * np.float32(13.0))
    assert _compiles() == compiles + 1
    assert any("larger than" in r.getMessage() for r in caplog.records)


def test_a_new_cache_folder_is_created_private(tmp_path):
    folder = tmp_path / "a" / "b" / "cache"
    _compile_into(folder, 14.0)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert len(list(folder.glob(f"*{disk_cache.SUFFIX}"))) == 1


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_a_folder_others_may_write_is_refused_with_a_warning(tmp_path, mode):
    folder = tmp_path / f"shared{mode:o}"
    folder.mkdir()
    os.chmod(folder, mode)
    compiles = _compiles()
    with pytest.warns(UserWarning, match="other users may write to it"):
        np.testing.assert_array_equal(_compile_into(folder, 15.0), X * np.float32(15.0))
    assert _compiles() == compiles + 1
    assert list(folder.iterdir()) == []


def test_a_folder_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    _compile_into(tmp_path, 16.0)  # a valid entry, which must not be used
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(tmp_path).st_uid + 1)
    compiles = _compiles()
    with pytest.warns(UserWarning, match="belongs to another user"):
        np.testing.assert_array_equal(_compile_into(tmp_path, 16.0), X * np.float32(16.0))
    assert _compiles() == compiles + 1


def test_an_unwritable_folder_is_reported_and_still_read(tmp_path, monkeypatch):
    _compile_into(tmp_path, 17.0)
    os.chmod(tmp_path, 0o500)
    if os.geteuid() == 0:  # root may write anywhere: make the check see what a user would
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda path, mode: False if mode & os.W_OK
                            else real_access(path, mode))
    try:
        compiles, hits = _compiles(), cpu_client().stats["disk_hits"]
        with pytest.warns(UserWarning, match="not writable"):
            np.testing.assert_array_equal(_compile_into(tmp_path, 17.0), X * np.float32(17.0))
        assert (_compiles(), cpu_client().stats["disk_hits"]) == (compiles, hits + 1)
        with pytest.warns(UserWarning, match="not writable"):
            _compile_into(tmp_path, 18.0)
        assert _compiles() == compiles + 1
        assert len(list(tmp_path.glob(f"*{disk_cache.SUFFIX}"))) == 1
    finally:
        os.chmod(tmp_path, 0o700)


def test_concurrent_writers_never_expose_half_an_entry(tmp_path, caplog):
    key = bytes(range(32))
    payloads = [bytes([n]) * (50_000 + 1000 * n) for n in range(4)]
    stop, seen = threading.Event(), []

    def write(payload: bytes) -> None:
        while not stop.is_set():
            disk_cache.write_entry(str(tmp_path), key, payload)

    def read() -> None:
        for _ in range(300):
            payload = disk_cache.read_entry(str(tmp_path), key)
            if payload is not None:
                seen.append(payload in payloads)

    writers = [threading.Thread(target=write, args=(p,)) for p in payloads]
    readers = [threading.Thread(target=read) for _ in range(2)]
    with caplog.at_level(logging.WARNING, logger="jaxlite"), warnings.catch_warnings():
        warnings.simplefilter("error")
        for thread in writers + readers:
            thread.start()
        for thread in readers:
            thread.join()
        stop.set()
        for thread in writers:
            thread.join()
    assert seen and all(seen)
    assert not [r for r in caplog.records if "is not used" in r.getMessage()]
    assert not list(tmp_path.glob("*.tmp"))


_SCRIPT = """
import numpy as np, jaxlite as jax
from jaxlite.backends import registry
from jaxlite.backends.cpu import compile_cache, disk_cache
f = jax.jit(lambda x: x * 2.75 + 1.0)
print(float(f(np.ones(3, np.float32))[0]))
stats = registry.get_backend("cpu").stats
print(disk_cache.cache_folder(), stats["disk_hits"], stats["optimizations"],
      stats["llvm_compiles"], compile_cache.codegen_fingerprint())
"""


def _run(tmp_path, **env: str) -> tuple[list[str], str]:
    """Run `_SCRIPT` in a fresh interpreter with the cache variables of `env` only."""
    environ = {k: v for k, v in os.environ.items() if k not in (
        "JAXLITE_COMPILATION_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR", "XDG_CACHE_HOME")}
    environ.update(env)
    result = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                            timeout=300, env=environ, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    *out, fingerprint = result.stdout.split()
    _FINGERPRINTS.append(fingerprint)
    return out, result.stderr


# The compiler's source digest each `_run` saw: entries are keyed on it, so a warm start is
# only expected where it did not change (a working tree being edited meanwhile changes it).
_FINGERPRINTS: list[str] = []


def _entries(folder) -> int:
    return len(list(folder.glob(f"*{disk_cache.SUFFIX}")))


def test_the_default_folder_is_per_user_under_xdg_cache_home(tmp_path):
    out, _ = _run(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    folder = tmp_path / "xdg" / "jaxlite"
    assert out == ["3.75", str(folder), "0", "1", "1"]
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert _entries(folder) == 2  # the program and the runtime module


def test_jax_and_jaxlite_folder_variables_and_a_warm_start(tmp_path):
    jax_folder, lite_folder = tmp_path / "jax", tmp_path / "lite"
    for attempt in range(3):
        folder = jax_folder / str(attempt)
        _FINGERPRINTS.clear()
        out, _ = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=str(folder))
        assert out == ["3.75", str(folder), "0", "1", "1"] and _entries(folder) == 2
        # a fresh process finds the program before the passes: no passes, no LLVM; logged
        out, err = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=str(folder), JAX_LOG_COMPILES="1")
        if _FINGERPRINTS[0] == _FINGERPRINTS[1]:
            break
    assert out == ["3.75", str(folder), "1", "0", "0"]
    assert "Persistent compilation cache hit for 'jit__lambda'" in err
    # JAXLITE_COMPILATION_CACHE_DIR wins over JAX's variable
    out, _ = _run(tmp_path, JAX_COMPILATION_CACHE_DIR=str(jax_folder),
                  JAXLITE_COMPILATION_CACHE_DIR=str(lite_folder))
    assert out[1] == str(lite_folder) and _entries(lite_folder) == 2


def test_the_folder_options_and_turning_the_cache_off():
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    assert config.read("jaxlite_default_cache_dir") == os.path.join(home, "jaxlite")
    with config.override("jax_compilation_cache_dir", None):
        assert disk_cache.cache_folder() == config.read("jaxlite_default_cache_dir")
        with config.override("jaxlite_default_cache_dir", ""):
            assert disk_cache.cache_folder() is None
    with config.override("jax_compilation_cache_dir", "/some/folder"):
        assert disk_cache.cache_folder() == "/some/folder"
        with config.override("jax_enable_compilation_cache", False):
            assert disk_cache.cache_folder() is None
    with config.override("jax_compilation_cache_dir", ""):
        assert disk_cache.cache_folder() is None


def test_a_program_is_stored_with_what_the_executable_needs(tmp_path):
    """The entry's program is the optimized module and its ModuleInfo: a hit runs like the
    freshly compiled executable, and its optimized text is the same."""
    m = _fresh_module(21.5)
    with config.override("jax_compilation_cache_dir", str(tmp_path)):
        OBJECT_CACHE.clear()
        fresh = cpu_client().compile(m, CompileOptions())
        OBJECT_CACHE.clear()
        cached = cpu_client().compile(m, CompileOptions())
    assert cached.text("optimized_hlo") == fresh.text("optimized_hlo")
    assert cached.memory_analysis() == fresh.memory_analysis()
    np.testing.assert_array_equal(
        cached.execute_arrays([X])[0], fresh.execute_arrays([X])[0])


def test_programs_with_host_callbacks_are_not_stored(tmp_path):
    """Their module names the callback by a key unique to the process: never found again."""
    with config.override("jax_compilation_cache_dir", str(tmp_path)):
        f = jaxlite.jit(lambda x: jaxlite.pure_callback(
            lambda v: v * 2, jaxlite.ShapeDtypeStruct((3,), np.float32), x) + 1)
        np.testing.assert_array_equal(f(np.ones(3, np.float32)), np.full(3, 3.0, np.float32))
    assert _entries(tmp_path) == 0


def _dot_module(extra: str) -> object:
    return module(f"""
    %a = f32[48,40] parameter(0)
    %b = f32[40,56] parameter(1)
    %d = f32[48,56] dot(%a, %b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
    %n = f32[48,40] {extra}(%a)
    ROOT %t = (f32[48,56], f32[48,40]) tuple(%d, %n)
    """)


def test_gemm_library_code_is_shared_through_the_disk_cache(tmp_path, monkeypatch):
    """A new program with the same GEMM links the library modules' object code stored by
    another program (in another process: the process's own memo emptied here), without
    LLVM, and computes the same bits."""
    compiled = []

    def counting(ir_text: str) -> bytes:
        compiled.append(ir_text)
        return emit(ir_text)

    emit = native._library_object
    monkeypatch.setattr(native, "_library_object", counting)
    a = np.linspace(-1, 1, 48 * 40, dtype=np.float32).reshape(48, 40)
    b = np.linspace(2, -1, 40 * 56, dtype=np.float32).reshape(40, 56)
    results = []
    for extra in ("negate", "abs"):
        monkeypatch.setattr(native, "_LIBRARY_OBJECTS", type(native._LIBRARY_OBJECTS)())
        with config.override("jax_compilation_cache_dir", str(tmp_path)):
            OBJECT_CACHE.clear()
            results.append(run_cpu(_dot_module(extra), [a, b]))
        if extra == "negate":
            assert compiled, "the GEMM's library modules were compiled"
            stored, compiled = len(compiled), []
    assert compiled == []
    assert _entries(tmp_path) == stored + 2  # the libraries, then each program
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[1][1], np.abs(a))
    # the same bits as code compiled without any cache
    monkeypatch.setattr(native, "_LIBRARY_OBJECTS", type(native._LIBRARY_OBJECTS)())
    with config.override("jax_compilation_cache_dir", ""):
        OBJECT_CACHE.clear()
        np.testing.assert_array_equal(run_cpu(_dot_module("negate"), [a, b])[0],
                                      results[0][0])
