"""Assembles code50k's training corpus from corpus/recipe.toml (run by `make corpus`).

Every source is a pinned artifact (a PyPI sdist fetched with `pip download`, a Debian package
fetched with `apt-get download`) whose SHA-256 the recipe records: a different file is an error.
From each artifact the files matching the source's rules are taken, in path order, as
documents of one language. Then, per language, documents are ordered by the SHA-256 of
"source/path" and taken until the language's byte budget is spent; a document goes to the
held-out split when the first byte of the SHA-256 of its text is below `heldout_below`.

Excluded: files that are not UTF-8, files longer than `max_file_bytes`, generated or minified
files (a line longer than `max_line_chars`), data tables (more than `max_digit_fraction` of the
characters are digits), exact duplicates (by content), and any file whose
contents equal a file under /usr/include (those headers are the evaluation set: they are read
here only to be left out).

Output (not committed): `<out>/train.jsonl` and `<out>/heldout.jsonl`, one JSON object per
document (lang, source, path, text), and `<out>/MANIFEST.json` with the counts, bytes and
SHA-256 of both files. The same recipe and artifacts give the same bytes.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch(src: dict, downloads: Path) -> Path:
    """The artifact of a source, downloaded into `downloads` when absent, SHA-256 checked."""
    path = downloads / src["file"]
    if not path.exists():
        downloads.mkdir(parents=True, exist_ok=True)
        if src["kind"] == "pypi":
            cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", src["name"],
                   "-d", str(downloads), f"{src['name']}=={src['version']}"]
        elif src["kind"] == "deb":
            cmd = ["apt-get", "download", f"{src['name']}={src['version']}"]
        else:
            raise SystemExit(f"unknown source kind {src['kind']!r}")
        print("+", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, cwd=downloads)
        if not path.exists():
            raise SystemExit(f"{' '.join(cmd)} did not produce {path.name}")
    digest = sha256(path.read_bytes())
    if digest != src["sha256"]:
        raise SystemExit(f"{path}: SHA-256 {digest}, the recipe pins {src['sha256']}")
    return path


def _deb_data_tar(data: bytes) -> tarfile.TarFile:
    if not data.startswith(b"!<arch>\n"):
        raise SystemExit("not a Debian package (ar archive)")
    pos = 8
    while pos + 60 <= len(data):
        name = data[pos : pos + 16].decode().strip().rstrip("/")
        size = int(data[pos + 48 : pos + 58].decode().strip())
        body = data[pos + 60 : pos + 60 + size]
        if name.startswith("data.tar"):
            return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
        pos += 60 + size + (size & 1)
    raise SystemExit("Debian package without data.tar")


def members(path: Path, kind: str):
    """(path inside the artifact, bytes) of every regular file, in path order. sdist paths
    lose their top folder (NAME-VERSION/), package paths their leading './'."""
    data = path.read_bytes()
    out = []
    if path.name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                if not info.is_dir():
                    out.append((info.filename.split("/", 1)[-1], z.read(info)))
    else:
        tar = _deb_data_tar(data) if kind == "deb" else tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        with tar:
            for m in tar.getmembers():
                if m.isfile():
                    name = m.name.removeprefix("./")
                    if kind != "deb":
                        name = name.split("/", 1)[-1]
                    out.append((name, tar.extractfile(m).read()))
    out.sort()
    return out


def eval_hashes(root: str = "/usr/include") -> set[str]:
    hashes = set()
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            try:
                hashes.add(sha256(Path(dirpath, f).read_bytes()))
            except OSError:
                pass
    return hashes


def assemble(recipe_path: Path, downloads: Path, out: Path) -> dict:
    recipe = tomllib.loads(recipe_path.read_text())
    limits = recipe["limits"]
    budgets: dict[str, int] = recipe["budget"]
    excluded_eval = eval_hashes()
    seen: set[str] = set()
    docs: dict[str, list[tuple[str, str, str, str]]] = {lang: [] for lang in budgets}
    skipped = {"not-utf8": 0, "too-large": 0, "long-line": 0, "data-table": 0, "duplicate": 0,
               "in-/usr/include": 0}
    for src in recipe["source"]:
        artifact = fetch(src, downloads)
        rules = [(r[0], r[1]) for r in src["include"]]
        excludes = src.get("exclude", [])
        for name, data in members(artifact, src["kind"]):
            if any(fnmatch.fnmatchcase(name, x) for x in excludes):
                continue
            lang = next((lg for pat, lg in rules if fnmatch.fnmatchcase(name, pat)), None)
            if lang is None:
                continue
            if len(data) > limits["max_file_bytes"]:
                skipped["too-large"] += 1
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                skipped["not-utf8"] += 1
                continue
            if any(len(line) > limits["max_line_chars"] for line in text.splitlines()):
                skipped["long-line"] += 1
                continue
            if sum(c.isdigit() for c in text) > limits["max_digit_fraction"] * len(text):
                skipped["data-table"] += 1
                continue
            h = sha256(data)
            if h in excluded_eval:
                skipped["in-/usr/include"] += 1
                continue
            if h in seen:
                skipped["duplicate"] += 1
                continue
            seen.add(h)
            key = sha256(f"{src['file']}/{name}".encode())
            docs[lang].append((key, src["file"], name, text))
    out.mkdir(parents=True, exist_ok=True)
    split_at = limits["heldout_below"]
    stats: dict[str, dict[str, int]] = {}
    train_lines: list[str] = []
    held_lines: list[str] = []
    for lang in sorted(budgets):
        used = 0
        s = stats[lang] = {"train_docs": 0, "train_bytes": 0, "heldout_docs": 0, "heldout_bytes": 0,
                           "available_bytes": sum(len(d[3].encode()) for d in docs[lang])}
        for _key, source, name, text in sorted(docs[lang]):
            n = len(text.encode())
            if used + n > budgets[lang]:
                continue
            used += n
            line = json.dumps({"lang": lang, "source": source, "path": name, "text": text}, ensure_ascii=False)
            if hashlib.sha256(text.encode()).digest()[0] < split_at:
                held_lines.append(line)
                s["heldout_docs"] += 1
                s["heldout_bytes"] += n
            else:
                train_lines.append(line)
                s["train_docs"] += 1
                s["train_bytes"] += n
    manifest = {"languages": stats, "skipped": skipped}
    for fname, lines in (("train.jsonl", train_lines), ("heldout.jsonl", held_lines)):
        data = ("\n".join(lines) + "\n").encode()
        (out / fname).write_bytes(data)
        manifest[fname] = {"bytes": len(data), "sha256": sha256(data)}
    (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def read_documents(path: Path, langs: set[str] | None = None):
    """The texts of a corpus .jsonl file, in file order (optionally only some languages)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if langs is None or doc["lang"] in langs:
                yield doc["text"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", type=Path, default=HERE / "recipe.toml")
    ap.add_argument("--downloads", type=Path, default=HERE / "downloads")
    ap.add_argument("--out", type=Path, default=HERE / "out")
    args = ap.parse_args(argv)
    manifest = assemble(args.recipe, args.downloads, args.out)
    json.dump(manifest, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
