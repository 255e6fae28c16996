"""HuggingFace post-processors: ByteLevel (offset trimming), TemplateProcessing,
RobertaProcessing, BertProcessing and Sequence, for single sequences."""
from __future__ import annotations

from typing import Any, Mapping

from .errors import HFError, UnsupportedComponentError

# an encoding under construction: parallel lists
#   ids, tokens, offsets, type_ids, special (special_tokens_mask)


def _trim_offsets(enc: dict, add_prefix_space: bool) -> None:
    """ByteLevel's process_offsets: leading/trailing spaces (Ġ or whitespace) of a token leave
    its offsets, except the one prefix space of the first token with add_prefix_space."""
    offs = enc["offsets"]
    for i, tok in enumerate(enc["tokens"]):
        n = len(tok)
        lead = 0
        while lead < n and (tok[lead] == "\u0120" or tok[lead].isspace()):
            lead += 1
        trail = 0
        while trail < n and (tok[n - 1 - trail] == "\u0120" or tok[n - 1 - trail].isspace()):
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


def _special(enc: dict, ids: list[int], tokens: list[str], type_id: int) -> dict:
    n = len(ids)
    return {"ids": list(ids), "tokens": list(tokens), "offsets": [(0, 0)] * n, "type_ids": [type_id] * n,
            "special": [1] * n}


def _concat(parts: list[dict]) -> dict:
    out: dict = {"ids": [], "tokens": [], "offsets": [], "type_ids": [], "special": []}
    for p in parts:
        for k in out:
            out[k].extend(p[k])
    return out


class PostProcessor:
    """``process(encoding, add_special_tokens) -> encoding`` for one sequence."""

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
                self.steps.append(lambda enc, add: (_trim_offsets(enc, aps), enc)[1])
        elif t in ("RobertaProcessing", "BertProcessing"):
            sep, cls = spec.get("sep"), spec.get("cls")
            for name, v in (("sep", sep), ("cls", cls)):
                if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int)):
                    raise HFError(f"{where}: '{name}' must be [token, id]")
            trim = t == "RobertaProcessing" and spec.get("trim_offsets", True)
            aps = bool(spec.get("add_prefix_space", True))
            self.trims = self.trims or bool(trim)

            def roberta(enc, add, sep=sep, cls=cls, trim=trim, aps=aps):
                if trim:
                    _trim_offsets(enc, aps)
                enc["type_ids"] = [0] * len(enc["ids"])
                if not add:
                    return enc
                return _concat([_special(enc, [cls[1]], [cls[0]], 0), enc, _special(enc, [sep[1]], [sep[0]], 0)])

            self.steps.append(roberta)
        elif t == "TemplateProcessing":
            single = spec.get("single")
            specials = spec.get("special_tokens", {})
            if not isinstance(single, list) or not isinstance(specials, Mapping):
                raise HFError(f"{where}: TemplateProcessing needs 'single' and 'special_tokens'")
            pieces = []
            for i, piece in enumerate(single):
                if isinstance(piece, Mapping) and isinstance(piece.get("Sequence"), Mapping):
                    pieces.append(("seq", int(piece["Sequence"].get("type_id", 0))))
                elif isinstance(piece, Mapping) and isinstance(piece.get("SpecialToken"), Mapping):
                    name = piece["SpecialToken"].get("id")
                    tok = specials.get(name)
                    if not isinstance(tok, Mapping) or not isinstance(tok.get("ids"), list):
                        raise HFError(f"{where}: missing special token {name!r} in special_tokens")
                    pieces.append(("tok", int(piece["SpecialToken"].get("type_id", 0)),
                                   [int(x) for x in tok["ids"]], [str(x) for x in tok.get("tokens", [])]))
                else:
                    raise HFError(f"{where}.single[{i}]: expected Sequence or SpecialToken")

            def template(enc, add, pieces=pieces):
                parts = []
                for p in pieces:
                    if p[0] == "seq":
                        enc["type_ids"] = [p[1]] * len(enc["ids"])
                        parts.append(enc)
                    elif add:
                        parts.append(_special(enc, p[2], p[3], p[1]))
                return _concat(parts)

            self.steps.append(template)
        else:
            raise UnsupportedComponentError(f"{where}: unsupported post-processor type {t!r}")

    def process(self, enc: dict, add_special_tokens: bool) -> dict:
        for step in self.steps:
            enc = step(enc, add_special_tokens)
        return enc
