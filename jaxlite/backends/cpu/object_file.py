"""Is this plausibly an object file LLVM made for this host? A check of the container format
before the bytes reach LLVM's linker, which trusts its input and crashes on garbage.

It checks what a linker relies on first: the ELF identification (64-bit, the host's byte
order and machine), that it is a relocatable file, and that the section header table and
every section with content lie inside the file. It cannot prove the code inside is benign;
that trust comes from the cache folder being private (see `disk_cache`).
"""
from __future__ import annotations

import platform
import struct
import sys

__all__ = ["object_file_problem"]

_ELF_MAGIC = b"\x7fELF"
_MACHO_MAGICS = (b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf")
_ET_REL = 1
_SHT_NOBITS = 8
_SECTION_HEADER_SIZE = 64
# platform.machine() -> ELF e_machine
_ELF_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183, "ppc64le": 21,
                 "ppc64": 21, "s390x": 22, "riscv64": 243, "loongarch64": 258}


def object_file_problem(code: bytes) -> str:
    """What makes `code` unfit to link on this host, or "" when it looks like an object file
    for it."""
    if code[:4] == _ELF_MAGIC:
        return _elf_problem(code)
    if sys.platform == "darwin" and code[:4] in _MACHO_MAGICS:
        return ""
    if sys.platform.startswith("win") and len(code) >= 20:  # COFF has no magic to check
        return ""
    return "it is not an object file for this platform"


def _elf_problem(code: bytes) -> str:
    if len(code) < 64:
        return "its ELF header is truncated"
    if code[4] != 2:
        return "it is not a 64-bit ELF file"
    order = "<" if code[5] == 1 else ">"
    if (order == "<") != (sys.byteorder == "little"):
        return "its ELF byte order is not the host's"
    e_type, e_machine = struct.unpack_from(order + "HH", code, 16)
    if e_type != _ET_REL:
        return f"its ELF type is {e_type}, not a relocatable object"
    expected = _ELF_MACHINES.get(platform.machine().lower())
    if expected is not None and e_machine != expected:
        return f"it is ELF code for machine {e_machine}, the host is {expected}"
    (shoff,) = struct.unpack_from(order + "Q", code, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", code, 0x3A)
    if shentsize != _SECTION_HEADER_SIZE or shnum == 0 or shstrndx >= shnum:
        return "its ELF section header table is malformed"
    if shoff + shnum * shentsize > len(code):
        return "its ELF section header table lies outside the file"
    for index in range(shnum):
        start = shoff + index * shentsize
        (kind,) = struct.unpack_from(order + "I", code, start + 4)
        offset, size = struct.unpack_from(order + "QQ", code, start + 0x18)
        if kind != _SHT_NOBITS and offset + size > len(code):
            return f"its ELF section {index} lies outside the file"
    return ""
