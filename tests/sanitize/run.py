"""Build ``scantok._native`` with AddressSanitizer + UndefinedBehaviorSanitizer and run the
scanner tests against it.

    python tests/sanitize/run.py [--keep] [pytest args ...]      # what `make sanitize` runs
    python tests/sanitize/run.py --fuzz 300 [fuzz args ...]      # the fuzz campaign under ASan
    python tests/sanitize/run.py --fuzz-encoder 300 [args ...]   # the encoder's campaign under ASan
    python tests/sanitize/run.py --fuzz-random-vocab 300 [args ...]  # random vocabularies under ASan

1. copies ``runtime/scantok`` (Python files only) into a temporary folder;
2. compiles the same sources and cdef as ``build/build_native.py`` (the committed generated C
   and ``runtime/scantok/csrc``) with ``-fsanitize=address,undefined -fno-omit-frame-pointer
   -O1 -g -fno-sanitize-recover=undefined`` into ``<tmp>/scantok/_native*.so``, and
   ``runtime/scantok/cpyext/*.c`` into ``<tmp>/scantok/_pylist<EXT_SUFFIX>``;
3. runs pytest on the scanner and encoder tests with that package first on ``PYTHONPATH``,
   ``LD_PRELOAD`` = the libasan of ``gcc -print-file-name=libasan.so``,
   ``ASAN_OPTIONS=detect_leaks=0``, ``UBSAN_OPTIONS=halt_on_error=1``, ``PYTHONMALLOC=malloc``
   (so input ``bytes`` get ASan redzones instead of living in pymalloc arenas), the ``sanitize``
   hypothesis profile, and ``SCANTOK_EXPECT_NATIVE_DIR`` (conftest fails if the imported module
   is not the sanitized one);
4. fails on a non-zero pytest status or on any sanitizer report in the output.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TESTS = [
    # _encode_bytes and encode_with_unstable (pointer arrays built in Python for bpe_encode_many)
    "tests/test_tiktoken_surface.py",
    "tests/test_scanner_data.py", "tests/test_scanner_api.py", "tests/test_scanner_diff.py",
    "tests/test_simd_paths.py", "tests/test_linear_time.py",
    # count() on two lanes (long inputs), joined or not
    "tests/test_scanner_count_lanes.py",
    # starts and ends on two lanes (the encoder's scan), joined or not
    "tests/test_scanner_store_lanes.py",
    # gaps (positions where no piece starts): gap_next's chains and rings
    "tests/test_scanner_gaps.py",
    # the BPE core (caches, merges, long pieces) and the list builder
    "tests/test_encoder_caches.py", "tests/test_encoding.py",
    # merges that start from pre-merged characters (bpe.c and hf_bpe.c), their tables
    "tests/test_premerge.py", "tests/test_hf_premerge.py",
    # long pieces merged in windows, junctions checked; models over characters (hf_bpe.c)
    "tests/test_hf_long_pieces.py", "tests/test_hf_char_bpe.py",
    # char models under split stages; stages over ByteLevel's characters (hf_bpe.c)
    "tests/test_hf_char_split.py", "tests/test_hf_byte_level_inner.py",
    # end_of_word_suffix in byte mode (CLIP), normalizers on numpy alignments
    "tests/test_hf_clip_style.py",
    # WordLevel models under split stages (hf_bpe.c's word table), BERT's normalizer
    "tests/test_hf_wordlevel_bert.py",
    # the short-text path: one C-API call (scantok._pylist.encode_small) for short str
    "tests/test_short_text_path.py",
    # str -> UTF-8 (cpyext/ucs_utf8.c): every kind, both paths, the bounded stores at the end
    "tests/test_str_utf8.py",
    # damaged cache images: the structural validation of bpe_table_from_image
    "tests/test_cache_corruption.py",
    # HF BPE merges (linear and heap), split stages, piece cache
    "tests/test_hf_tokenizer.py",
    # HF encodings' words (hfb_encode_words), lazy views, truncation and padding
    "tests/test_hf_encoding_words.py", "tests/test_hf_pairs_truncation.py",
    # lazy encodings made untracked in C (cpyext/pylist.c: lazy_encoding(s), encoding_class)
    "tests/test_hf_encoding_gc.py",
    # scanners compiled at run time: the table validator and the engine on runtime tables
    "tests/test_compile_runtime.py",
    # the corpus pipeline's JSON Lines extractor (csrc/jsonl.c)
    "tests/test_corpus_jsonl.py",
    # BPE training: counting, the merge loop, exports, bad input
    "tests/test_train_bpe.py",
]
SAN_FLAGS = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined"]
REPORT = re.compile(r"ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|"
                    r"SUMMARY: (Address|UndefinedBehavior)Sanitizer")


def build(tmp: Path) -> Path:
    shutil.copytree(REPO / "runtime" / "scantok", tmp / "scantok",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__", "*.o"))
    spec = importlib.util.spec_from_file_location("_scantok_build_native", REPO / "build" / "build_native.py")
    bn = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bn)  # exits with a clear message if the generated C is missing
    from cffi import FFI

    ffi = FFI()
    ffi.cdef("\n".join(m for h in bn._headers() for m in bn._CDEF.findall(h.read_text())))
    ffi.set_source(
        "scantok._native",
        "\n".join(f'#include "{h.name}"' for h in bn._headers()),
        sources=[str(p) for p in sorted(bn.GENERATED.glob("*.c")) + sorted(bn.CSRC.glob("*.c"))],
        include_dirs=[str(bn.GENERATED), str(bn.CSRC)],
        extra_compile_args=["-O1", "-g", "-std=gnu11", "-Wall", "-Wno-unused-function"] + SAN_FLAGS,
        extra_link_args=SAN_FLAGS,
    )
    so = Path(ffi.compile(tmpdir=str(tmp / "_build"), verbose=False))
    dest = tmp / "scantok" / so.name
    shutil.copy2(so, dest)
    build_pylist(tmp)
    return dest


def build_pylist(tmp: Path) -> Path:
    """scantok._pylist (the C-API list builder, see setup.py) with the same sanitizers."""
    import sysconfig

    out = tmp / "scantok" / ("_pylist" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-O1", "-g", "-Wall", *SAN_FLAGS,
         f"-I{sysconfig.get_paths()['include']}",
         *sorted(str(p) for p in (REPO / "runtime" / "scantok" / "cpyext").glob("*.c")),
         "-o", str(out)],
        check=True,
    )
    return out


def main() -> int:
    argv = sys.argv[1:]
    keep = "--keep" in argv
    fuzz_seconds = None
    fuzz_script = "tests/fuzz_scanner.py"
    for flag, script in (("--fuzz", "tests/fuzz_scanner.py"), ("--fuzz-encoder", "tests/fuzz_encoder.py"),
                         ("--fuzz-random-vocab", "tests/fuzz_random_vocab.py")):
        if flag in argv:
            i = argv.index(flag)
            fuzz_seconds, fuzz_script = argv[i + 1], script
            del argv[i:i + 2]
    extra = [a for a in argv if a != "--keep"]
    tmp = Path(tempfile.mkdtemp(prefix="scantok-sanitize-"))
    try:
        so = build(tmp)
        print(f"sanitize: built {so}", flush=True)
        libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                                 text=True, check=True).stdout.strip()
        if not os.path.isabs(libasan) or not os.path.exists(libasan):
            print(f"sanitize: libasan not found (gcc -print-file-name=libasan.so gave {libasan!r})")
            return 2
        env = dict(os.environ)
        env.pop("SCANTOK_FORCE_IMPL", None)
        env.update({
            "PYTHONPATH": os.pathsep.join([str(tmp)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])),
            "LD_PRELOAD": libasan,
            # reports also go to files: a report from a test whose output pytest captures dies
            # with the process (pytest then just exits 1), so the files are what says why
            "ASAN_OPTIONS": "detect_leaks=0:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0"
                            f":log_path={tmp / 'asan'}:log_exe_name=0",
            "UBSAN_OPTIONS": f"halt_on_error=1:print_stacktrace=1:log_path={tmp / 'ubsan'}",
            # every Python object (bytes included) from malloc: ASan redzones around input buffers
            "PYTHONMALLOC": "malloc",
            "SCANTOK_HYPOTHESIS_PROFILE": env.get("SCANTOK_HYPOTHESIS_PROFILE", "sanitize"),
            "SCANTOK_EXPECT_NATIVE_DIR": str(tmp / "scantok"),
        })
        probe = subprocess.run([sys.executable, "-c", "import scantok._native as n; print(n.__file__)"],
                               env=env, capture_output=True, text=True, cwd=str(tmp))
        if probe.returncode != 0 or not probe.stdout.strip().startswith(str(tmp)):
            print(f"sanitize: the sanitized module is not the one imported:\n{probe.stdout}{probe.stderr}")
            return 2
        print(f"sanitize: importing {probe.stdout.strip()} with LD_PRELOAD={libasan}", flush=True)
        if fuzz_seconds is not None:
            cmd = [sys.executable, fuzz_script, "--seconds", fuzz_seconds, *extra]
        else:
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W",
                   "ignore::DeprecationWarning", *TESTS, *extra]
        print("sanitize: " + " ".join(cmd), flush=True)
        proc = subprocess.Popen(cmd, env=env, cwd=str(REPO), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        reports = 0
        for line in proc.stdout:
            sys.stdout.write(line)
            if REPORT.search(line):
                reports += 1
        rc = proc.wait()
        for log in sorted(tmp.glob("asan.*")) + sorted(tmp.glob("ubsan.*")):
            text = log.read_text(errors="replace")
            print(f"sanitize: report file {log.name}:\n{text}")
            reports += len(REPORT.findall(text)) or 1
        if reports:
            print(f"sanitize: FAIL: {reports} sanitizer report line(s)")
            return 1
        if rc != 0:
            print(f"sanitize: FAIL: {'fuzz' if fuzz_seconds else 'pytest'} exited with {rc}")
            return 1
        print(f"sanitize: OK (no AddressSanitizer/UBSan report, {'fuzz' if fuzz_seconds else 'tests'} passed)")
        return 0
    finally:
        if keep:
            print(f"sanitize: kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
