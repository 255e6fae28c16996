"""A run killed with SIGKILL (at several points) and started again gives exactly the bytes
of an uninterrupted run."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import scantok.corpus as sc
from corpus_helpers import corpus_docs, same_tree, write_jsonl

RUN = """
import sys, scantok.corpus
scantok.corpus.encode_files(sys.argv[2:], sys.argv[1], encoding="o200k_base", num_workers=2,
                            partition_bytes=200_000, shard_bytes=150_000, append_eot=True)
"""


def _complete_parts(out: Path) -> int:
    parts = out / "parts"
    return sum(1 for p in parts.iterdir() if ".tmp-" not in p.name) if parts.exists() else 0


def _run_and_kill(out: Path, inputs: list[str], at_parts: int, group: bool = True) -> bool:
    """Starts a run in a new process group and SIGKILLs the group (or only the parent, whose
    workers then live on) once ``at_parts`` partitions are complete. False if the run
    finished first."""
    proc = subprocess.Popen([sys.executable, "-c", RUN, str(out), *inputs], start_new_session=True)
    try:
        while proc.poll() is None:
            if _complete_parts(out) >= at_parts:
                (os.killpg if group else os.kill)(proc.pid, signal.SIGKILL)
                proc.wait()
                return True
            time.sleep(0.002)
        return False
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_resume_after_sigkill(tmp_path):
    inputs = []
    for k, name in enumerate(["en", "code", "multi"] * 2):
        docs = corpus_docs(name, 1_500_000, seed=k)
        inputs.append(str(write_jsonl(tmp_path / f"{k}-{name}.jsonl", docs)))
    total = len(sc.encode_files(inputs, tmp_path / "whole", encoding="o200k_base", num_workers=2,
                                partition_bytes=200_000, shard_bytes=150_000, append_eot=True).out_dir) and \
        sc.open(tmp_path / "whole").info
    nparts = len(list((tmp_path / "whole" / "parts").iterdir()))
    assert nparts > 20
    out = tmp_path / "killed"
    kills = 0
    for at in (1, nparts // 3, (2 * nparts) // 3):
        kills += _run_and_kill(out, inputs, at)
    assert kills >= 2, "the runs finished before they could be killed: make the input larger"
    assert not (out / "corpus.json").exists() or kills < 3
    leftovers = [p.name for p in (out / "parts").iterdir() if ".tmp-" in p.name]
    report = sc.encode_files(inputs, out, encoding="o200k_base", num_workers=2, partition_bytes=200_000,
                             shard_bytes=150_000, append_eot=True)
    assert 0 < report.partitions_resumed < report.partitions
    assert not [p.name for p in (out / "parts").iterdir() if ".tmp-" in p.name]
    same_tree(tmp_path / "whole", out)
    assert sc.open(out).info == total
    print(f"{kills} kills, {len(leftovers)} half-written partitions left, {report.partitions_resumed}/{report.partitions} resumed")


def test_restart_while_orphaned_workers_finish(tmp_path):
    """Only the parent is killed: its workers finish their partitions while the restarted run
    works; both commit atomically, so the result is still the uninterrupted run's bytes."""
    inputs = [str(write_jsonl(tmp_path / f"{k}.jsonl", corpus_docs(name, 1_200_000, seed=k)))
              for k, name in enumerate(["code", "en"])]
    kw = dict(encoding="o200k_base", num_workers=2, partition_bytes=200_000, shard_bytes=150_000, append_eot=True)
    sc.encode_files(inputs, tmp_path / "whole", **kw)
    out = tmp_path / "killed"
    assert _run_and_kill(out, inputs, 2, group=False), "the run finished before it could be killed"
    sc.encode_files(inputs, out, **kw)
    time.sleep(0.5)  # let the orphans finish whatever they still hold
    leftovers = [p.name for p in (out / "parts").iterdir() if ".tmp-" in p.name]
    for name in leftovers:  # an orphan's half-written partition, removed by the next run
        assert (out / "parts" / name.split(".tmp-")[0] / "part.json").exists()
    for name in leftovers:
        import shutil

        shutil.rmtree(out / "parts" / name, ignore_errors=True)
    same_tree(tmp_path / "whole", out)
    # the orphans leave once their partition is done (they used to wait for work for ever)
    deadline = time.monotonic() + 10
    while _processes_running_on(out) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_running_on(out), "orphaned workers of the killed run are still running"


def _processes_running_on(out: Path) -> list[int]:
    """Live (not zombie) processes whose command line names ``out`` (Linux /proc)."""
    found = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (d / "cmdline").read_bytes()
            state = (d / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if str(out).encode() in cmd and state not in (b"Z", b"X"):
            found.append(int(d.name))
    return found


def test_clean_tmp_keeps_what_a_live_process_writes(tmp_path):
    """A restarted run removes the half-written leftovers of dead processes, never the files
    a still-running (orphaned) worker is writing: removing them under it let that worker
    commit a partition without its docs.bin (seen in CI as a missing file at finalize)."""
    from scantok.corpus import writer

    parts = tmp_path / "parts"
    parts.mkdir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        mine = parts / f"00001.tmp-{live.pid}-abcd1234"
        mine.mkdir()
        (mine / "docs.bin").write_bytes(b"rows")
        dead = parts / f"00002.tmp-{gone.pid}-abcd1234"
        dead.mkdir()
        (dead / "000.bin").write_bytes(b"ids")
        dead_file = tmp_path / f"index.bin.tmp-{gone.pid}-0123abcd"
        dead_file.write_bytes(b"")
        odd = parts / "00003.tmp-notapid"
        odd.mkdir()
        writer.clean_tmp(str(tmp_path))
        assert (mine / "docs.bin").read_bytes() == b"rows"
        assert not dead.exists() and not dead_file.exists() and not odd.exists()
    finally:
        live.kill()
        live.wait()
    writer.clean_tmp(str(tmp_path))  # its writer is gone now: a leftover like any other
    assert not mine.exists()
