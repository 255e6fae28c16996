"""HuggingFace post-processors: ByteLevel (offset trimming), TemplateProcessing,
RobertaProcessing, BertProcessing and Sequence, for a sequence or a pair, with the overflowing
parts truncation made (each gets the special tokens too), as tokenizers 0.23.3."""
from __future__ import annotations

from typing import Any, Mapping

from .encoding import clone, merge, record, set_sequence_id
from .errors import HFError, UnsupportedComponentError
from .fields import flag, items, string, u32
from .unicode_tables import _WS

# the encodings are records (see encoding.py): parallel lists ids, tokens, offsets, type_ids,
# special (special_tokens_mask), words, attention (None: all ones), ranges (sequence id ->
# token range) and overflowing (records)


def _trim_offsets(enc: dict, add_prefix_space: bool) -> None:
    """ByteLevel's process_offsets: leading/trailing spaces (Ġ or whitespace) of a token leave
    its offsets, except the one prefix space of the first token with add_prefix_space."""
    offs = enc["offsets"] = list(enc["offsets"])  # a new list: a template may repeat a sequence
    for i, tok in enumerate(enc["tokens"]):
        n = len(tok)
        lead = 0
        # Rust's char::is_whitespace (str.isspace also takes U+001C..U+001F)
        while lead < n and (tok[lead] == "\u0120" or ord(tok[lead]) in _WS):
            lead += 1
        trail = 0
        while trail < n and (tok[n - 1 - trail] == "\u0120" or ord(tok[n - 1 - trail]) in _WS):
            trail += 1
        if not lead and not trail:
            continue
        a, b = offs[i]
        if lead:
            if (i == 0 or a == 0) and add_prefix_space and lead == 1:
                lead = 0
            a = min(a + lead, b)
        if trail and b >= trail:
            b = max(b - trail, a)
        offs[i] = (a, b)


def _trim_all(encs: list, add_prefix_space: bool) -> None:
    """_trim_offsets of each encoding and of its overflowing parts."""
    for enc in encs:
        _trim_offsets(enc, add_prefix_space)
        for o in enc.get("overflowing") or ():
            _trim_offsets(o, add_prefix_space)


def _special(ids: list[int], tokens: list[str], type_id: int) -> dict:
    n = len(ids)
    return record(list(ids), list(tokens), [(0, 0)] * n, [type_id] * n, [1] * n)


def _wrap(enc: dict, pre: tuple | None, post: tuple, type_ids: list[int], pre_type: int, post_type: int,
          seq: int, overflowing: list | None = None) -> dict:
    """enc between the special tokens pre and post ((token, id) or None), its type ids
    replaced by type_ids and its special mask by zeros (BertProcessing / RobertaProcessing);
    its attention mask all ones again, its tokens sequence seq's (its earlier sequence ranges
    dropped), its overflowing parts the given ones."""
    n = len(enc["ids"])
    head = [pre] if pre is not None else []
    h = len(head)
    out = record([t[1] for t in head] + enc["ids"] + [post[1]], [t[0] for t in head] + enc["tokens"] + [post[0]],
                 [(0, 0)] * h + enc["offsets"] + [(0, 0)], [pre_type] * h + type_ids + [post_type],
                 [1] * h + [0] * n + [1], [None] * h + enc["words"] + [None])
    out["ranges"] = {seq: (h, h + n)}
    out["overflowing"] = overflowing or []
    return out


def _template(spec: Any, specials: Mapping, where: str) -> list | None:
    """A TemplateProcessing template (single or pair) as pieces ("seq", 0 or 1, type id) and
    ("tok", type id, ids, tokens); None when absent."""
    if spec is None:
        return None
    if not isinstance(spec, list):
        raise HFError(f"{where}: expected a list of pieces")
    pieces: list = []
    for i, piece in enumerate(spec):
        w = f"{where}[{i}]"
        if isinstance(piece, Mapping) and isinstance(piece.get("Sequence"), Mapping):
            seq = piece["Sequence"]
            if seq.get("id") not in ("A", "B"):
                raise HFError(f"{w}.Sequence.id must be \"A\" or \"B\", got {seq.get('id')!r}")
            pieces.append(("seq", 1 if seq["id"] == "B" else 0, u32(seq.get("type_id"), f"{w}.Sequence.type_id")))
        elif isinstance(piece, Mapping) and isinstance(piece.get("SpecialToken"), Mapping):
            name = piece["SpecialToken"].get("id")
            tok = specials.get(name)
            if not isinstance(tok, Mapping):
                raise HFError(f"{where}: missing special token {name!r} in special_tokens")
            tw = f"{where}: special_tokens[{name!r}]"
            ids = [u32(x, f"{tw}.ids[{k}]") for k, x in enumerate(items(tok.get("ids"), f"{tw}.ids"))]
            tokens = [string(x, f"{tw}.tokens[{k}]") for k, x in enumerate(items(tok.get("tokens"), f"{tw}.tokens"))]
            if len(ids) != len(tokens):  # (tokenizers' SpecialToken::new refuses it too)
                raise HFError(f"{tw}: ids and tokens must be of the same length ({len(ids)} and {len(tokens)})")
            pieces.append(("tok", u32(piece["SpecialToken"].get("type_id"), f"{w}.SpecialToken.type_id"), ids, tokens))
        else:
            raise HFError(f"{w}: expected Sequence or SpecialToken")
    return pieces


class PostProcessor:
    """``process(encoding, add_special_tokens) -> encoding`` for one sequence.

    As tokenizers, the steps pass on a *list* of encodings, merged at the end: the input is one
    encoding, TemplateProcessing returns one encoding per piece of its template (the next steps
    of a Sequence see that many: two take the pair template, or BertProcessing's and
    RobertaProcessing's pair form; more make TemplateProcessing fail, where tokenizers panics),
    and ByteLevel trims the offsets of each encoding apart (its first token is the first of its
    encoding)."""

    def __init__(self, spec: Any, token_to_id, where: str = "post_processor"):
        self.steps: list = []
        self.trims = False  # some step trims offsets (it reads the tokens)
        self.added: list = []  # per processor: the special tokens it adds (single, pair)
        self.present = spec is not None  # without one, tokenizers leaves the type ids alone
        self._compile(spec, token_to_id, where)

    def added_tokens(self, is_pair: bool) -> int:
        """How many special tokens processing adds (tokenizers' added_tokens)."""
        return sum(a[is_pair] for a in self.added)

    def _compile(self, spec: Any, token_to_id, where: str) -> None:
        if spec is None:
            return
        if not isinstance(spec, Mapping) or "type" not in spec:
            raise HFError(f"{where}: expected an object with a 'type'")
        t = spec["type"]
        if t == "Sequence":
            subs = spec.get("processors")
            if not isinstance(subs, list):
                raise HFError(f"{where}: Sequence needs a 'processors' list")
            for i, sub in enumerate(subs):
                self._compile(sub, token_to_id, f"{where}.processors[{i}]")
        elif t == "ByteLevel":
            self.added.append((0, 0))
            if flag(spec, "trim_offsets", True, where):
                aps = flag(spec, "add_prefix_space", True, where)
                self.trims = True

                def byte_level(encs, add, aps=aps):
                    _trim_all(encs, aps)
                    for i, e in enumerate(encs):
                        set_sequence_id(e, i)
                    return encs

                self.steps.append(byte_level)
            else:  # it still makes each encoding the sequence of its index
                def sequence_ids(encs, add):
                    for i, e in enumerate(encs):
                        set_sequence_id(e, i)
                    return encs

                self.steps.append(sequence_ids)
        elif t in ("RobertaProcessing", "BertProcessing"):
            sep, cls = spec.get("sep"), spec.get("cls")
            for name, v in (("sep", sep), ("cls", cls)):
                if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)):
                    raise HFError(f"{where}: '{name}' must be [token, id]")
                u32(v[1], f"{where}.{name}[1]")
            sep, cls = (sep[0], sep[1]), (cls[0], cls[1])
            self.added.append((2, 4) if t == "RobertaProcessing" else (2, 3))
            if t == "RobertaProcessing":
                trim = flag(spec, "trim_offsets", True, where)
                aps = flag(spec, "add_prefix_space", True, where)
                self.trims = self.trims or trim

                def roberta(encs, add, sep=sep, cls=cls, trim=trim, aps=aps):
                    if trim:
                        _trim_all(encs, aps)
                    for enc in encs:  # every type id 0, even without specials (not the overflowing parts')
                        enc["type_ids"] = [0] * len(enc["ids"])
                    if not add:
                        return encs
                    return [_wrap(enc, cls if i == 0 else sep, sep, enc["type_ids"], 0, 0, min(i, 1),
                                  [_wrap(o, cls if i == 0 else sep, sep, [0] * len(o["ids"]), 0, 0, min(i, 1))
                                   for o in enc.get("overflowing") or ()])
                            for i, enc in enumerate(encs)]

                self.steps.append(roberta)
            else:
                def bert(encs, add, sep=sep, cls=cls):
                    if not add:
                        return encs
                    return [_wrap(enc, cls, sep, enc["type_ids"], 0, 0, 0,
                                  [_wrap(o, cls, sep, o["type_ids"], 0, 0, 0) for o in enc.get("overflowing") or ()])
                            if i == 0 else
                            _wrap(enc, None, sep, enc["type_ids"], 0, 1, 1,
                                  [_wrap(o, None, sep, o["type_ids"], 0, 1, 1) for o in enc.get("overflowing") or ()])
                            for i, enc in enumerate(encs)]

                self.steps.append(bert)
        elif t == "TemplateProcessing":
            specials = spec.get("special_tokens", {})
            if not isinstance(specials, Mapping):
                raise HFError(f"{where}: TemplateProcessing needs 'special_tokens'")
            single = _template(spec.get("single"), specials, f"{where}.single")
            if single is None:
                raise HFError(f"{where}: TemplateProcessing needs 'single'")
            pair = _template(spec.get("pair"), specials, f"{where}.pair")
            if pair is None:  # tokenizers does not load such a file either
                raise HFError(f"{where}: TemplateProcessing needs 'pair'")
            self.added.append(tuple(sum(len(p[2]) for p in tpl if p[0] == "tok") for tpl in (single, pair)))

            def template(encs, add, single=single, pair=pair, where=where):
                if len(encs) == 1:
                    pieces = single
                elif len(encs) == 2:
                    pieces = pair
                else:
                    raise HFError(f"{where}: TemplateProcessing given {len(encs)} encodings (an earlier "
                                  f"step of the Sequence made them; tokenizers panics here)")
                out = []
                for p in pieces:
                    if p[0] == "seq":
                        if p[1] >= len(encs):  # $B in the single template: tokenizers panics
                            raise HFError(f"{where}: the template names sequence B, and there is one sequence "
                                          "(tokenizers panics here)")
                        enc = encs[p[1]]
                        enc["type_ids"] = [p[2]] * len(enc["ids"])
                        set_sequence_id(enc, p[1])
                        out.append(clone(enc))
                    elif add:
                        out.append(_special(p[2], p[3], p[1]))
                return out

            self.steps.append(template)
        else:
            raise UnsupportedComponentError(f"{where}: unsupported post-processor type {t!r}")

    def process(self, enc: dict, pair: dict | None, add_special_tokens: bool) -> dict:
        """The encoding of enc and pair (records, changed in place; pair None for one
        sequence): the type id of each sequence's tokens is its index (with a post-processor),
        then the steps, then the encodings they give are merged."""
        encs = [enc] if pair is None else [enc, pair]
        if self.present:
            for i, e in enumerate(encs):
                set_sequence_id(e, i)
                for o in e["overflowing"]:
                    set_sequence_id(o, i)
                e["type_ids"] = [i] * len(e["ids"])
        elif pair is not None:  # tokenizers' default_process: the pair's sequences, not their overflowing parts
            for i, e in enumerate(encs):
                set_sequence_id(e, i)
        for step in self.steps:
            encs = step(encs, add_special_tokens)
        return encs[0] if len(encs) == 1 and not encs[0].get("overflowing") else merge(encs)
