"""tiktoken 0.14.0's own test suite (vendored in tests/tiktoken_suite/, MIT) passes against
scantok through a re-export-only ``tiktoken`` shim, in a subprocess so that the shim shadows
the real tiktoken there only."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "tiktoken_suite"
SHIM = SUITE / "shim"
# every test of the suite; none needs the network against scantok (see tiktoken_suite/README.md)
EXPECTED_PASSED = 33
NEEDS_NETWORK: dict[str, str] = {}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SHIM)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("TIKTOKEN_MAX_EXAMPLES", "100")  # the suite's own default
    return env


def test_vendored_suite_is_tiktokens():
    """The vendored files are byte for byte those of the tiktoken-0.14.0 sdist (SHA256SUMS)."""
    import hashlib

    listed = {}
    for line in (SUITE / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split()
        listed[name] = digest
    on_disk = {p.relative_to(SUITE).as_posix() for p in (SUITE / "tests").glob("*.py")} | {"LICENSE"}
    assert set(listed) == on_disk
    for name, digest in listed.items():
        assert hashlib.sha256((SUITE / name).read_bytes()).hexdigest() == digest, name


def test_shim_shadows_tiktoken_only_in_the_subprocess():
    import tiktoken

    assert not Path(tiktoken.__file__).resolve().is_relative_to(SHIM)
    out = subprocess.run(
        [sys.executable, "-c", "import tiktoken, tiktoken.load, tiktoken.core; "
         "print(tiktoken.__file__); print(tiktoken.Encoding.__module__)"],
        env=_env(), capture_output=True, text=True, check=True,
    ).stdout.split()
    assert Path(out[0]).resolve().is_relative_to(SHIM)
    assert out[1] == "scantok.encoding"


def test_tiktoken_suite_passes(tmp_path):
    cmd = [
        sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
        "-c", str(SUITE / "pytest.ini"), "--rootdir", str(SUITE), str(SUITE / "tests"),
    ]
    for test_id in NEEDS_NETWORK:
        cmd += ["--deselect", test_id]
    proc = subprocess.run(cmd, env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    passed = int(m.group(1)) if (m := re.search(r"(\d+) passed", summary)) else 0
    failed = re.search(r"(\d+) (failed|error)", summary)
    report = f"\n{proc.stdout[-20000:]}\n{proc.stderr[-5000:]}"
    print(report)
    assert proc.returncode == 0 and not failed, report
    assert passed == EXPECTED_PASSED, report
