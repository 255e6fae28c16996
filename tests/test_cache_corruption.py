"""Damaged cache files (a disk error, a torn copy) are detected on load and rebuilt from the
rank file: never a crash, never other ids.

Both cache files are covered: the built-table image (``*.stki``, mmap'ed and used in place by
the C encoder) and the parsed rank table (``*.stkb``). Every case runs in a subprocess, so a
segmentation fault fails the test instead of killing pytest; the subprocess runs the cases one
after another and says which one it is on, so a crash names its case.

The structural validation of the image is also tested on its own: a damaged image whose
checksum is rewritten to match (``bpe_image_seal``, standing in for a checksum that matches by
accident) must be rejected or, if the damage leaves it structurally sound, encode and decode
without reading outside the image (``make sanitize`` runs this file under ASan).
"""
from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from test_encoding_oracle import tiktoken_encoding, vocab_dir

ENCODING = "r50k_base"  # the smallest table: a rebuild from the rank file is quick
TEXT = (
    "Hello, world! The quick brown fox's 12345 jumps\n\n    over    the lazy dog.\t"
    "héllo wörld 日本語のテキスト Ελληνικά русский "
    "def f(x):\n        return x ** 2  # comment\n" * 3
    + "abcdefghij" * 80 + " " * 300 + "x" + "\U0001F600" * 20
)

# The image header (bpe.c img_header): 15 words, then 12 array offsets.
_IMG_HEADER = struct.Struct("<15Q12Q")
_FIELDS = ("magic", "abi", "total", "checksum", "n", "maxlen", "max_rank", "mask", "shift",
           "short_shift", "short_mask", "hot_mask", "hot_shift", "dec_n", "dec_blob_len")
_REGIONS = ("byte_rank", "pair2", "short3", "short4", "hot", "bloom", "slots", "dec_off",
            "dec_len", "dec_blob", "premerge")

# A damage spec, applied to the clean bytes of a file (the subprocess gets specs, not images):
# {"cut": n} keeps the first n bytes, {"flips": [bit, ...]} flips bits, {"put": [offset, hex]}
# overwrites bytes, {"append": n} adds n zero bytes, {"delete": true} removes the file.
_APPLY = r"""
def apply(data, spec):
    if spec.get("delete"):
        return None
    b = bytearray(data)
    for bit in spec.get("flips", ()):
        b[bit >> 3] ^= 1 << (bit & 7)
    if "put" in spec:
        at, hexdata = spec["put"]
        b[at:at + len(hexdata) // 2] = bytes.fromhex(hexdata)
    if "cut" in spec:
        del b[spec["cut"]:]
    b += bytes(spec.get("append", 0))
    return bytes(b)
"""

# Runs in the subprocess: for each case, write the damaged cache files, load a fresh encoding
# (registry._load_encoding: no per-process sharing), encode and decode.
_RUNNER = _APPLY + r"""
import json, os, sys
from pathlib import Path
from scantok import registry
cache = Path(os.environ["SCANTOK_CACHE_DIR"])
job = json.loads(sys.stdin.read())
text = job["text"]
clean = {name: bytes.fromhex(h) for name, h in job["clean"].items()}
results = {}
for case in job["cases"]:
    for name, spec in case["files"].items():
        data = apply(clean[name], spec)
        if data is None:
            (cache / name).unlink(missing_ok=True)
        else:
            (cache / name).write_bytes(data)
    print("case", case["name"], file=sys.stderr, flush=True)
    enc = registry._load_encoding(%(encoding)r)
    ids = enc.encode_ordinary(text)
    assert enc.decode(ids) == text, case["name"]
    results[case["name"]] = ids
    del enc
print(json.dumps(results))
"""


def _env(cache: Path) -> dict[str, str]:
    return dict(os.environ, SCANTOK_CACHE_DIR=str(cache), SCANTOK_VOCAB_DIR=str(vocab_dir()),
                SCANTOK_OFFLINE="1")


def _run_cases(cache: Path, files: dict[str, bytes], cases: list[dict]) -> dict[str, list[int]]:
    payload = json.dumps({"text": TEXT, "clean": {k: v.hex() for k, v in files.items()}, "cases": cases})
    r = subprocess.run([sys.executable, "-c", _RUNNER % {"encoding": ENCODING}], input=payload,
                       env=_env(cache), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        last = [l for l in r.stderr.splitlines() if l.startswith("case ")][-1:]
        pytest.fail(f"subprocess exited with {r.returncode} (signal if negative) during "
                    f"{last}:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A warm cache for ENCODING: {file name: bytes} of its .stki and .stkb, and the ids."""
    cache = tmp_path_factory.mktemp("cache")
    code = (f"import json, scantok; e = scantok.get_encoding({ENCODING!r}); "
            f"import sys; print(json.dumps(e.encode_ordinary(sys.stdin.read())))")
    r = subprocess.run([sys.executable, "-c", code], input=TEXT, env=_env(cache),
                       capture_output=True, text=True, check=True)
    files = {p.name: p.read_bytes() for p in cache.iterdir() if p.suffix in (".stki", ".stkb")}
    assert sorted(Path(n).suffix for n in files) == [".stkb", ".stki"], files.keys()
    ids = json.loads(r.stdout)
    assert ids == tiktoken_encoding(ENCODING).encode_ordinary(TEXT)
    return cache, files, ids


def _names(files):
    stki = next(n for n in files if n.endswith(".stki"))
    stkb = next(n for n in files if n.endswith(".stkb"))
    return stki, stkb


def _flips(rng: random.Random, lo: int, hi: int, k: int) -> dict:
    """k random bit flips in bytes [lo, hi)."""
    return {"flips": [rng.randrange(lo * 8, hi * 8) for _ in range(k)]}


def _regions(img: bytes) -> dict[str, tuple[int, int]]:
    vals = _IMG_HEADER.unpack_from(img, 0)
    bounds = list(vals[15:15 + len(_REGIONS)]) + [len(img)]
    return {name: (bounds[i], bounds[i + 1]) for i, name in enumerate(_REGIONS)}


def _image_damage(img: bytes) -> list[tuple[str, dict]]:
    rng = random.Random(13)
    n = len(img)
    cases: list[tuple[str, dict]] = [("zero-length", {"cut": 0})]
    for cut in sorted({1, 7, 8, 63, 64, _IMG_HEADER.size - 1, _IMG_HEADER.size, 4095, 4096, 4097,
                       n // 3, n // 2, n - 4096, n - 65, n - 64, n - 1}):
        cases.append((f"truncated-{cut}", {"cut": cut}))
    cases.append(("appended", {"append": 64}))
    cases.append(("wrong-magic", {"put": [0, b"XXXXXXXX".hex()]}))
    cases.append(("wrong-abi", {"put": [8, bytes(8).hex()]}))
    for i, field in enumerate(_FIELDS):
        cases.append((f"header-{field}", _flips(rng, 8 * i, 8 * i + 8, 1)))
    for i in range(12):
        cases.append((f"header-off{i}", {"flips": [8 * (15 + i) * 8 + rng.randrange(40)]}))
    for name, (lo, hi) in _regions(img).items():
        cases.append((f"region-{name}", _flips(rng, lo, hi, 3)))
    cases.append(("issue-20000-bits", _flips(rng, 4096, n, 20_000)))
    return cases


def test_damaged_image_is_rebuilt(clean):
    cache, files, ids = clean
    stki, stkb = _names(files)
    cases = [{"name": "clean", "files": {stki: {}, stkb: {}}}]
    for name, spec in _image_damage(files[stki]):
        cases.append({"name": name, "files": {stki: spec, stkb: {}}})
    got = _run_cases(cache, files, cases)
    assert set(got) == {c["name"] for c in cases}
    wrong = [name for name, g in got.items() if g != ids]
    assert not wrong, wrong
    # the damaged image was replaced by a good one (atomically: never a half-written file)
    assert (cache / stki).read_bytes() == files[stki]


def test_damaged_rank_table_is_rebuilt(clean):
    cache, files, ids = clean
    stki, stkb = _names(files)
    n = len(files[stkb])
    rng = random.Random(7)
    damage = [("zero-length", {"cut": 0}), ("wrong-magic", {"put": [4, "01"]})]
    damage += [(f"truncated-{c}", {"cut": c}) for c in (1, 23, 32, 4096, n // 2, n - 1)]
    damage += [(f"bit-{i}", _flips(rng, 0, n, 1)) for i in range(8)]
    damage += [("header-n", {"flips": [8 * 8 + 3]}), ("header-blob-len", {"flips": [16 * 8 + 1]}),
               ("offsets", {"flips": [(32 + 4 * 50257 + 4 * 1000) * 8 + 20]}),
               ("many-bits", _flips(rng, 4096, n, 5000))]
    # with no image, the rank table is what the encoder is built from; also both damaged
    cases = [{"name": f"stkb-{name}", "files": {stki: {"delete": True}, stkb: spec}} for name, spec in damage]
    cases.append({"name": "both", "files": {stki: {"cut": len(files[stki]) // 3}, stkb: {"cut": 100}}})
    got = _run_cases(cache, files, cases)
    wrong = [name for name, g in got.items() if g != ids]
    assert not wrong, wrong
    assert (cache / stkb).read_bytes() == files[stkb]  # rewritten


_SEALED = _APPLY + r"""
import json, sys
from scantok._native import ffi, lib
import scantok
dfa = scantok.scanner(%(scanner)r)._dfa
job = json.loads(sys.stdin.read())
clean = bytes.fromhex(job["image"])
data = job["text"].encode()
out = {}
for name, spec in job["cases"]:
    img = apply(clean, spec)
    buf = ffi.new("uint8_t[]", len(img) + 64)
    addr = int(ffi.cast("uintptr_t", buf))
    p = buf + ((-addr) %% 64)  # 64-byte aligned, as an mmap is
    ffi.memmove(p, img, len(img))
    if spec.get("seal", True):
        lib.bpe_image_seal(p, len(img))
    print("case", name, file=sys.stderr, flush=True)
    t = lib.bpe_table_from_image(p, len(img))
    if t == ffi.NULL:
        out[name] = "rejected"
        continue
    b = ffi.new("bpe_buf *")
    rc = lib.bpe_encode_scan(t, dfa, data, len(data), 0, b, ffi.NULL, 0, 2**64 - 1)
    if rc == 0 and b.len:
        total = lib.bpe_decode_len(t, b.ids, b.len)
        if total >= 0:
            o = ffi.new("uint8_t[]", total + 1)
            lib.bpe_decode(t, b.ids, b.len, o)
    pp = ffi.new("const uint8_t **")
    for i in range(0, 60000, 7):
        lib.bpe_token_bytes(t, i, pp)
    lib.bpe_buf_free(b)
    lib.bpe_table_free(t)
    out[name] = "accepted"
print(json.dumps(out))
"""


def test_structural_validation_without_checksum(clean):
    """Damage with a matching checksum: rejected, or harmless to memory safety (ids may then
    differ, which only a checksum collision, 2**-64, could produce)."""
    cache, files, _ids = clean
    stki, _ = _names(files)
    img = files[stki]
    rng = random.Random(5)
    cases = []
    for name, (lo, hi) in _regions(img).items():
        for k in range(4):
            cases.append((f"{name}-{k}", _flips(rng, lo, hi, 1 + 40 * k)))
    for i, field in enumerate(_FIELDS[4:], start=4):
        cases.append((f"header-{field}", _flips(rng, 8 * i, 8 * i + 8, 1)))
    for i in range(len(_REGIONS)):
        cases.append((f"header-off{i}", {"flips": [8 * (15 + i) * 8 + 6 + rng.randrange(20)]}))
    cases.append(("random-bits", _flips(rng, 4096, len(img), 20_000)))
    cases.append(("unsealed", dict(_flips(rng, 4096, len(img), 1), seal=False)))
    payload = json.dumps({"image": img.hex(), "text": TEXT, "cases": cases})
    r = subprocess.run([sys.executable, "-c", _SEALED % {"scanner": "r50k_base"}], input=payload,
                       env=_env(cache), capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        last = [l for l in r.stderr.splitlines() if l.startswith("case ")][-1:]
        pytest.fail(f"subprocess exited with {r.returncode} during {last}:\n{r.stderr[-3000:]}")
    got = json.loads(r.stdout)
    assert len(got) == len(cases)
    # index-bearing damage is caught by the structure checks alone
    # (premerge-3: 121 flips, some in its character table, which names tokens)
    for name in ("header-mask", "header-dec_n", "header-shift", "random-bits", "dec_len-3", "premerge-3"):
        assert got[name] == "rejected", name
    # without the seal, the checksum alone rejects a single flipped bit
    assert got["unsealed"] == "rejected"
