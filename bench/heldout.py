"""Held-out text for the benchmarks: text in none of the shared corpora, and used to tune
nothing in scantok (no cache, vocabulary or threshold was chosen on it), from files every
Debian machine with vim and a C compiler has.

* ``prose``: vim's help files (English);
* ``c``: the C headers under /usr/include (evaluation only: never train a vocabulary on them);
* ``intl``: vim's tutor in 30 languages and its UTF-8 menu translations.

Each is at most ``UNSEEN_MAX`` bytes of UTF-8; files that are not UTF-8 are skipped.
"""
from __future__ import annotations

from pathlib import Path

UNSEEN_MAX = 4 << 20  # bytes of each text


def _concat(paths, limit: int = UNSEEN_MAX) -> str:
    out, n = [], 0
    for path in paths:
        try:
            t = Path(path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # not UTF-8 (some tutors and headers are in legacy encodings)
        out.append(t)
        n += len(t.encode())
        if n >= limit:
            break
    text = "".join(out).encode()[:limit].decode("utf-8", "ignore")
    if not text:
        raise FileNotFoundError("no such text on this machine")
    return text


def _vim() -> Path:
    return max(Path("/usr/share/vim").glob("vim*/doc"), default=Path("/nonexistent")).parent


UNSEEN = {  # name -> loader of a text no library (and no scantok tuning) has seen
    "prose": lambda: _concat(sorted((_vim() / "doc").glob("*.txt"))),
    "c": lambda: _concat(sorted(Path("/usr/include").rglob("*.h"))),
    "intl": lambda: _concat(sorted((_vim() / "tutor").glob("tutor*.utf-8"))
                            + sorted((_vim() / "lang").glob("menu_*utf-8.vim"))),
}
