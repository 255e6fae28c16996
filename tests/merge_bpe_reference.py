"""A slow, plain reference for BPE by merge list (HuggingFace's rule), to check that tiktoken's
rule (merge the adjacent pair whose concatenation has the lowest rank) gives the same ids for
a vocabulary made by a BPE trainer.

``recover_merges(ranks)`` rebuilds the merge list of a tiktoken-style vocabulary: the token of
rank r is split by tiktoken's rule using only the ranks below r; for a trained vocabulary that
split is the pair whose merge made the token (``corpus/train_code50k.py`` checks it equals the
trainer's merges), so the merge list travels inside the ranks.
"""
from __future__ import annotations


def _greedy_merge(piece: bytes, priority) -> list[bytes]:
    """Repeatedly merges the adjacent pair of lowest ``priority(left, right)`` (None: never),
    leftmost on ties."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    while len(parts) > 1:
        best, at = None, -1
        for i in range(len(parts) - 1):
            p = priority(parts[i], parts[i + 1])
            if p is not None and (best is None or p < best):
                best, at = p, i
        if at < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return parts


def rank_bpe(piece: bytes, ranks: dict[bytes, int], limit: int | None = None) -> list[bytes]:
    """tiktoken's rule on one piece, with only the ranks below ``limit``."""

    def priority(a, b):
        r = ranks.get(a + b)
        return None if r is None or (limit is not None and r >= limit) else r

    return _greedy_merge(piece, priority)


def recover_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge list of a trained vocabulary, in rank order (ValueError if some token is not
    the merge of two lower-ranked tokens)."""
    merges = []
    for token, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) == 1:
            continue
        parts = rank_bpe(token, ranks, limit=r)
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {r}) is not the merge of two lower-ranked tokens: {parts}")
        merges.append((parts[0], parts[1]))
    return merges


def merge_bpe(piece: bytes, merge_rank: dict[tuple[bytes, bytes], int]) -> list[bytes]:
    """HuggingFace's rule on one piece: repeatedly merge the adjacent pair whose merge rule
    comes first (leftmost on ties)."""
    return _greedy_merge(piece, lambda a, b: merge_rank.get((a, b)))
