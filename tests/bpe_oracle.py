"""Oracles for BPE training tests.

* ``hf_train(source, ...)``: HuggingFace tokenizers (pinned 0.23.3) BpeTrainer with
  ``initial_alphabet=ByteLevel.alphabet()``, on files (``Tokenizer.train``) or an iterator
  (``train_from_iterator``); returns (merges as byte pairs, vocab, tokenizer).
* ``reference_train(word_counts, ...)``: a line-by-line Python transcription of
  ``BpeTrainer::do_train`` (trainer.rs and word.rs) that takes piece counts directly, to test the
  C merge loop where HF cannot be fed (counts near 2**31, huge vocabularies of ties).

Equal heap entries (same count and pair, different position sets) pop first-in first-out
here; HF's order between them depends on its hash seeds (see scantok.bpe.train's docstring).
"""
from __future__ import annotations

import heapq
import itertools
from collections import defaultdict

from scantok.bpe.bytelevel import bytes_to_str, str_to_bytes


def hf_pre_tokenizer(pattern: str | None):
    """HF's pre-tokenizer for a scantok pattern name ("gpt2" or a scanner name)."""
    from tokenizers import Regex, pre_tokenizers

    import scantok

    if pattern == "gpt2":
        return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    return pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(scantok.scanner(pattern).pattern), "isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def hf_train(source, *, vocab_size: int, pattern: str = "gpt2", special_tokens=(),
             min_frequency: int = 0, max_token_length=None, files: bool = False):
    import json

    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = hf_pre_tokenizer(pattern)
    tr = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                             min_frequency=min_frequency, max_token_length=max_token_length,
                             initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    if files:
        tok.train([str(f) for f in source], tr)
    else:
        tok.train_from_iterator(source, tr)
    d = json.loads(tok.to_str())
    merges = [tuple(str_to_bytes(x) for x in m) for m in d["model"]["merges"]]
    return merges, d["model"]["vocab"], tok


def _wrap32(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def _merge_word(w: list[list[int]], c1: int, c2: int, rep: int, max_len: int):
    """word.rs Word::merge; w is a list of [id, len] symbols."""
    changes = []
    i = 0
    while i < len(w):
        if w[i][0] == c1 and i + 1 < len(w) and w[i + 1][0] == c2:
            first, second = w[i], w[i + 1]
            new = [rep, first[1] + second[1]]
            if i > 0:
                changes.append(((w[i - 1][0], first[0]), -1))
                if w[i - 1][1] + new[1] < max_len:
                    changes.append(((w[i - 1][0], rep), 1))
            w[i:i + 2] = [new]
            if i < len(w) - 1:
                changes.append(((second[0], w[i + 1][0]), -1))
                if w[i + 1][1] + new[1] < max_len:
                    changes.append(((rep, w[i + 1][0]), 1))
        i += 1
    return changes


def reference_train(word_counts: dict[bytes, int], *, vocab_size: int, special_tokens=(),
                    min_frequency: int = 0, max_token_length: int | None = None):
    """Returns (merges as [(bytes, bytes)] in HF's saved order, vocab {str: id})."""
    max_len = max_token_length if max_token_length is not None else 2**64 - 1
    w2id: dict[str, int] = {}
    id2w: list[str] = []
    for t in special_tokens:
        if t not in w2id:
            id2w.append(t)
            w2id[t] = len(id2w) - 1
    from tokenizers import pre_tokenizers

    for c in sorted(pre_tokenizers.ByteLevel.alphabet(), key=ord):
        if c not in w2id:
            id2w.append(c)
            w2id[c] = len(id2w) - 1
    words, counts = [], []
    for piece, cnt in word_counts.items():
        words.append([[w2id[c], 1] for c in bytes_to_str(piece)])
        counts.append(cnt)
    pair_counts: dict = defaultdict(int)
    where: dict = defaultdict(set)
    for i, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_counts[(a[0], b[0])] = _wrap32(pair_counts[(a[0], b[0])] + counts[i])
            where[(a[0], b[0])].add(i)
    seq = itertools.count()
    queue: list = []

    def push(count, pair, pos):
        heapq.heappush(queue, (-count, pair, next(seq), pos))

    for pair, pos in where.items():
        if pair_counts[pair] > 0:
            push(pair_counts[pair], pair, pos)
    where.clear()
    merges = []
    while len(w2id) < vocab_size and queue:
        negc, pair, _, pos = heapq.heappop(queue)
        count = -negc
        cur = pair_counts[pair] % 2**64
        if count != cur:
            push(cur, pair, pos)
            continue
        if count < 1 or min_frequency > count:
            break
        new_token = id2w[pair[0]] + id2w[pair[1]]
        new_id = w2id.get(new_token, len(id2w))
        if new_token not in w2id:
            id2w.append(new_token)
            w2id[new_token] = new_id
        merges.append((pair, new_id))
        for i in pos:
            for p, change in _merge_word(words[i], pair[0], pair[1], new_id, max_len):
                pair_counts[p] = _wrap32(pair_counts[p] + _wrap32(change * counts[i]))
                if change > 0:
                    where[p].add(i)
        for p, ps in where.items():
            if pair_counts[p] > 0:
                push(pair_counts[p], p, ps)
        where.clear()
    # the saved model keeps one rank per pair: the last one
    rank = {pair: r for r, (pair, _) in enumerate(merges)}
    ordered = sorted(rank, key=rank.__getitem__)
    return [(str_to_bytes(id2w[a]), str_to_bytes(id2w[b])) for a, b in ordered], w2id
