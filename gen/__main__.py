"""`python -m gen`: compile every pattern spec into C (the pipeline, stage by stage).

    parse → nfa → determinize → minimize → classes/accel → emit
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
import tomllib
from pathlib import Path

from . import compiler
from . import ucd as ucd_mod
from .emit import Spec, environment, render_common, render_scanner

PatternError = compiler.PatternError

ROOT = Path(__file__).resolve().parent.parent
PATTERNS = ROOT / "gen" / "patterns"
OUT = ROOT / "build" / "generated"


def load_spec(path: Path) -> Spec:
    raw = path.read_bytes()
    data = tomllib.loads(raw.decode("utf-8"))
    missing = {"name", "pattern"} - data.keys()
    if missing:
        raise SystemExit(f"{path}: missing {sorted(missing)}")
    if data["name"] != path.stem:
        raise SystemExit(f"{path}: name {data['name']!r} must match the file name")
    return Spec(name=data["name"], pattern=data["pattern"], description=data.get("description", ""), source=raw,
                unicode=data.get("unicode"))


def compile_pattern(pattern: str, ucd, flavor: str = "regex"):
    """pattern text → minimised DFA (raises PatternError)."""
    return compiler.compile_dfa(pattern, ucd, flavor=flavor)


def write_unicode_tables(tables: list, quiet: bool) -> None:
    """The compact property tables scantok.compile reads at run time (runtime/scantok/compiler/data/)."""
    uni = compiler.unicode
    uni.DATA_DIR.mkdir(parents=True, exist_ok=True)
    for ucd in tables:
        spec = ucd_mod.version_spec(ucd.version)
        source = hashlib.sha256("".join(f"{f.name} {f.sha256}\n" for f in spec.files).encode()).hexdigest()
        data = uni.dump(ucd, compiler.GENERATOR_VERSION, source)
        path = uni.table_path(ucd.version)
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        if not quiet:
            print(f"{path.name}: {len(data)} bytes", file=sys.stderr)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gen", description=__doc__)
    ap.add_argument("--unicode", default=ucd_mod.UNICODE_VERSION, help="Unicode version (default %(default)s)")
    ap.add_argument("--ucd-dir", default=None, help="folder of <version>/ UCD folders (default: $UCD_DIR or ucd/)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)

    ucd = ucd_mod.load(args.unicode, args.ucd_dir)
    specs = [load_spec(p) for p in sorted(PATTERNS.glob("*.toml"))]
    # A spec may name its own Unicode version (unicode = "17.0.0"): where a HuggingFace table
    # follows a property of a newer Unicode than the default, it is that property.
    versions = {v: ucd_mod.load(v, args.ucd_dir) for v in sorted({s.unicode for s in specs if s.unicode})}
    versions[ucd.version] = ucd
    for spec in specs:
        spec.unicode = spec.unicode or ucd.version
    env = environment()
    files = render_common(env, specs, ucd.version)
    for spec in specs:
        t0 = time.perf_counter()
        try:
            dfa = compile_pattern(spec.pattern, versions[spec.unicode])
        except PatternError as e:
            raise SystemExit(f"gen/patterns/{spec.name}.toml: {e}")
        files[f"scanner_{spec.ident}.c"] = render_scanner(env, spec, dfa, spec.unicode)
        if not args.quiet:
            print(f"{spec.name}: {len(dfa.trans)} states, {dfa.nclasses} classes "
                  f"({time.perf_counter() - t0:.1f}s)", file=sys.stderr)
    write_unicode_tables([versions[v] for v in sorted(versions)], args.quiet)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("scanner_*.c"):
        if stale.name not in files:
            stale.unlink()
    for name, text in files.items():
        path = out / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
