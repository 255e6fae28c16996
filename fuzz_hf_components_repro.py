"""fuzz_hf_components.py --seed 202: first mismatch, minimised: encode_batch_fast(add_special_tokens=True, num_threads=1)

tokenizers [([225, 225, 225], ['', '', ''], [(0, 0), (0, 0), (0, 0)], [1, 1, 1], [0, 0, 0], [0, 0, 0], [])]
scantok    [([225], [''], [(0, 0)], [1], [0], [0], [])]
"""
import json
import os
import sys

os.environ.setdefault('RAYON_NUM_THREADS', '1')
import tokenizers
import scantok


def F(e):
    return (e.ids, e.tokens, [tuple(o) for o in e.offsets], e.attention_mask, e.special_tokens_mask, e.type_ids)


OBJ = json.loads('{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": {"type": "Prepend", "prepend": "▁▁"}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}, {"type": "Metaspace", "replacement": "Ġ", "prepend_scheme": "first", "split": true}]}, "post_processor": null, "decoder": null, "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null, "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false, "vocab": {"Ġ": 225}, "merges": []}}')
ref = tokenizers.Tokenizer.from_str(json.dumps(OBJ))
ours = scantok.Tokenizer.from_str(ref.to_str())
x = [' ']

def run(src):
    try:
        return eval(src)
    except Exception as e:
        return f'<raised {type(e).__name__}>'


want = run('[F(e) for e in ref.encode_batch_fast(x, add_special_tokens=True)]')
got = run('[F(e) for e in ours.encode_batch_fast(x, add_special_tokens=True, num_threads=1)]')
print('tokenizers', want)
print('scantok   ', got)
both = all(isinstance(v, str) and v.startswith('<raised') for v in (want, got))
sys.exit(0 if want == got or both else 1)
