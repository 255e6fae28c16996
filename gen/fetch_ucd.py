"""Download the pinned UCD files (`make ucd`): python -m gen.fetch_ucd [--version V | --all].

Each file listed in ucd/manifest.toml for the version is fetched from the manifest's base URL
into ucd/<version>/ (or --dest/<version>/), its SHA-256 checked while it streams into a
temporary file in the same directory, and only then renamed into place, so an interrupted or
tampered download never leaves a file under its final name. Files already present with the
right hash are not downloaded again.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import urllib.request
from pathlib import Path

from gen import ucd


class FetchError(ucd.UCDError):
    """A download failed or did not have the pinned SHA-256."""


def fetch(spec: ucd.VersionSpec, directory: str | Path, *, base_url: str | None = None,
          urlopen=urllib.request.urlopen, log=lambda message: None) -> None:
    """Make `directory` hold every file of `spec`, verified. `urlopen` is injectable so the
    tests can serve files without a network."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    base_url = base_url or spec.base_url
    for f in spec.files:
        target = directory / f.name
        if target.is_file() and ucd.sha256_of(target) == f.sha256:
            log(f"ok       {target}")
            continue
        url = base_url + f.url_path
        log(f"download {url}")
        fd, temporary = tempfile.mkstemp(prefix=f".{f.name}.", suffix=".part", dir=directory)
        try:
            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as out:
                try:
                    with urlopen(url, timeout=60) as response:
                        for block in iter(lambda: response.read(1 << 16), b""):
                            digest.update(block)
                            out.write(block)
                except OSError as e:  # URLError is an OSError
                    raise FetchError(f"cannot download {url}: {e}") from e
            actual = digest.hexdigest()
            if actual != f.sha256:
                raise FetchError(f"{f.name} from {url}: SHA-256 mismatch (expected {f.sha256}, "
                                 f"got {actual}); not installed. The mirror serves other bytes "
                                 f"than Unicode {spec.version}, or the download was corrupted.")
            os.replace(temporary, target)   # atomic within one directory
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gen.fetch_ucd", description=__doc__.split(
        "\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--version", default=ucd.UNICODE_VERSION,
                       help=f"Unicode version to fetch (default {ucd.UNICODE_VERSION})")
    which.add_argument("--all", action="store_true", help="fetch every pinned version")
    parser.add_argument("--dest", type=Path, default=ucd.DEFAULT_UCD_DIR,
                        help="directory receiving <version>/ (default <repo>/ucd)")
    parser.add_argument("--base-url", help="mirror to download from instead of unicode.org "
                        "(same layout, e.g. file:///path/to/ucd/)")
    args = parser.parse_args(argv)

    try:
        specs = ucd.read_manifest()
        versions = sorted(specs) if args.all else [args.version]
        for version in versions:
            spec = ucd.version_spec(version)
            fetch(spec, args.dest / version, base_url=args.base_url,
                  log=lambda message: print(message, file=sys.stderr))
    except ucd.UCDError as e:
        print(f"fetch_ucd: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
