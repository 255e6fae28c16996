"""HuggingFace post-processors: ByteLevel (offset trimming), TemplateProcessing,
RobertaProcessing, BertProcessing and Sequence, for single sequences (a Sequence's steps may
still see two encodings: see PostProcessor)."""
from __future__ import annotations

from typing import Any, Mapping

from .errors import HFError, UnsupportedComponentError
from .unicode_tables import _WS

# an encoding under construction: parallel lists
#   ids, tokens, offsets, type_ids, special (special_tokens_mask)


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


def _special(ids: list[int], tokens: list[str], type_id: int) -> dict:
    n = len(ids)
    return {"ids": list(ids), "tokens": list(tokens), "offsets": [(0, 0)] * n, "type_ids": [type_id] * n,
            "special": [1] * n}


def _concat(parts: list[dict]) -> dict:
    out: dict = {"ids": [], "tokens": [], "offsets": [], "type_ids": [], "special": []}
    for p in parts:
        for k in out:
            out[k].extend(p[k])
    return out


def _wrap(enc: dict, pre: tuple | None, post: tuple, type_ids: list[int], pre_type: int, post_type: int) -> dict:
    """enc between the special tokens pre and post ((id, token) or None), its type ids
    replaced by type_ids and its special mask by zeros (BertProcessing / RobertaProcessing)."""
    n = len(enc["ids"])
    head = [pre] if pre is not None else []
    return {"ids": [t[1] for t in head] + enc["ids"] + [post[1]],
            "tokens": [t[0] for t in head] + enc["tokens"] + [post[0]],
            "offsets": [(0, 0)] * len(head) + enc["offsets"] + [(0, 0)],
            "type_ids": [pre_type] * len(head) + type_ids + [post_type],
            "special": [1] * len(head) + [0] * n + [1]}


def _template(spec: Any, specials: Mapping, where: str) -> list | None:
    """A TemplateProcessing template (single or pair) as pieces ("seq", 0 or 1, type id) and
    ("tok", type id, ids, tokens); None when absent."""
    if spec is None:
        return None
    if not isinstance(spec, list):
        raise HFError(f"{where}: expected a list of pieces")
    pieces: list = []
    for i, piece in enumerate(spec):
        if isinstance(piece, Mapping) and isinstance(piece.get("Sequence"), Mapping):
            seq = piece["Sequence"]
            pieces.append(("seq", 1 if seq.get("id") == "B" else 0, int(seq.get("type_id", 0))))
        elif isinstance(piece, Mapping) and isinstance(piece.get("SpecialToken"), Mapping):
            name = piece["SpecialToken"].get("id")
            tok = specials.get(name)
            if not isinstance(tok, Mapping) or not isinstance(tok.get("ids"), list):
                raise HFError(f"{where}: missing special token {name!r} in special_tokens")
            pieces.append(("tok", int(piece["SpecialToken"].get("type_id", 0)),
                           [int(x) for x in tok["ids"]], [str(x) for x in tok.get("tokens", [])]))
        else:
            raise HFError(f"{where}[{i}]: expected Sequence or SpecialToken")
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
        self._compile(spec, token_to_id, where)

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
            if spec.get("trim_offsets", True):
                aps = bool(spec.get("add_prefix_space", True))
                self.trims = True

                def byte_level(encs, add, aps=aps):
                    for enc in encs:
                        _trim_offsets(enc, aps)
                    return encs

                self.steps.append(byte_level)
        elif t in ("RobertaProcessing", "BertProcessing"):
            sep, cls = spec.get("sep"), spec.get("cls")
            for name, v in (("sep", sep), ("cls", cls)):
                if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int)):
                    raise HFError(f"{where}: '{name}' must be [token, id]")
            sep, cls = (sep[0], sep[1]), (cls[0], cls[1])
            if t == "RobertaProcessing":
                trim = bool(spec.get("trim_offsets", True))
                aps = bool(spec.get("add_prefix_space", True))
                self.trims = self.trims or trim

                def roberta(encs, add, sep=sep, cls=cls, trim=trim, aps=aps):
                    for enc in encs:
                        if trim:
                            _trim_offsets(enc, aps)
                        enc["type_ids"] = [0] * len(enc["ids"])  # every type id 0, even without specials
                    if not add:
                        return encs
                    return [_wrap(enc, cls if i == 0 else sep, sep, enc["type_ids"], 0, 0)
                            for i, enc in enumerate(encs)]

                self.steps.append(roberta)
            else:
                def bert(encs, add, sep=sep, cls=cls):
                    if not add:
                        return encs
                    return [_wrap(enc, cls, sep, enc["type_ids"], 0, 0) if i == 0
                            else _wrap(enc, None, sep, enc["type_ids"], 0, 1) for i, enc in enumerate(encs)]

                self.steps.append(bert)
        elif t == "TemplateProcessing":
            specials = spec.get("special_tokens", {})
            if not isinstance(specials, Mapping):
                raise HFError(f"{where}: TemplateProcessing needs 'special_tokens'")
            single = _template(spec.get("single"), specials, f"{where}.single")
            if single is None:
                raise HFError(f"{where}: TemplateProcessing needs 'single'")
            pair = _template(spec.get("pair"), specials, f"{where}.pair")

            def template(encs, add, single=single, pair=pair, where=where):
                if len(encs) == 1:
                    pieces = single
                elif len(encs) == 2 and pair is not None:
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
                        enc = dict(encs[p[1]])
                        enc["type_ids"] = [p[2]] * len(enc["ids"])
                        out.append(enc)
                    elif add:
                        out.append(_special(p[2], p[3], p[1]))
                return out

            self.steps.append(template)
        else:
            raise UnsupportedComponentError(f"{where}: unsupported post-processor type {t!r}")

    def process(self, enc: dict, add_special_tokens: bool) -> dict:
        encs = [enc]
        for step in self.steps:
            encs = step(encs, add_special_tokens)
        return encs[0] if len(encs) == 1 else _concat(encs)
