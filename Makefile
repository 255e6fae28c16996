# scantok developer commands. The UCD and vocabularies are found through UCD_DIR and
# SCANTOK_VOCAB_DIR; the defaults point at the shared data beside the repository (the UCD:
# ./ucd, where `make ucd` puts it, when there is none beside it).
PYTHON ?= python3
UCD_DIR ?= $(if $(wildcard ../shared/ucd),$(abspath ../shared/ucd),$(abspath ucd))
SCANTOK_VOCAB_DIR ?= $(abspath ../shared/vocab)
export UCD_DIR SCANTOK_VOCAB_DIR

.PHONY: all install gen check-gen ucd test bench fuzz sanitize clean

all: install

install:
	$(PYTHON) -m pip install -e ".[test,gen]"

# Regenerate build/generated/ from gen/patterns/*.toml, the UCD and templates/, and the
# Unicode tables scantok.compile reads at run time (runtime/scantok/compiler/data/).
gen:
	$(PYTHON) -m gen

# Fails if the committed generated C is not what `make gen` produces.
check-gen: gen
	@git status --porcelain -- build/generated runtime/scantok/compiler/data | grep . && { echo "build/generated or the Unicode tables are stale: run make gen and commit"; exit 1; } || true

# Download the pinned UCD files into $(UCD_DIR)/<version>/ (SHA-256 checked), where make gen
# reads them.
ucd:
	$(PYTHON) -m gen.fetch_ucd --all --dest $(UCD_DIR)

test:
	$(PYTHON) -m pytest -q

bench:
	@for b in bench/bench_*.py; do echo "== $$b"; $(PYTHON) $$b || exit 1; done

# Part of `make fuzz`: tiktoken's _encode_bytes and encode_with_unstable against tiktoken.
.PHONY: fuzz-tiktoken
fuzz: fuzz-tiktoken
fuzz-tiktoken:
	$(PYTHON) tests/fuzz_tiktoken_surface.py --seconds $${FUZZ_SECONDS:-600}

# Part of `make fuzz`: the BPE encoder on random vocabularies in random rank order, under random
# switches (seeds, pre-merge, cache size, windows, run guesses), against tiktoken.
.PHONY: fuzz-random-vocab
fuzz: fuzz-random-vocab
fuzz-random-vocab:
	$(PYTHON) tests/fuzz_random_vocab.py --seconds $${FUZZ_SECONDS:-600}

# Part of `make fuzz`: scantok.Tokenizer against tokenizers, and the batch encoder against
# tiktoken, on text of every CPython str kind (the str -> UTF-8 converter's paths).
.PHONY: fuzz-hf
fuzz: fuzz-hf
fuzz-hf:
	$(PYTHON) tests/fuzz_hf.py --seconds $${FUZZ_SECONDS:-600}

# Part of `make fuzz`: scantok.Tokenizer against tokenizers on random pipelines (model, normalizer,
# pre-tokenizer, added tokens, post-processor and decoder drawn anew for each tokenizer.json).
.PHONY: fuzz-hf-components
fuzz: fuzz-hf-components
fuzz-hf-components:
	$(PYTHON) tests/fuzz_hf_components.py --seconds $${FUZZ_SECONDS:-600}

# Long differential campaigns: FUZZ_SECONDS of random inputs on every scanner and path, as
# long on every BPE encoding against tiktoken, then the scanner property tests with the
# "fuzz" hypothesis profile (2,000 examples each).
fuzz:
	$(PYTHON) tests/fuzz_scanner.py --seconds $${FUZZ_SECONDS:-600} --jobs $${FUZZ_JOBS:-1}
	$(PYTHON) tests/fuzz_encoder.py --seconds $${FUZZ_SECONDS:-600}
	SCANTOK_SLOW=1 SCANTOK_HYPOTHESIS_PROFILE=fuzz $(PYTHON) -m pytest -q -p no:cacheprovider tests/test_train_bpe.py
	SCANTOK_HYPOTHESIS_PROFILE=fuzz $(PYTHON) -m pytest -q -p no:cacheprovider tests/test_scanner_diff.py tests/test_simd_paths.py tests/test_scanner_api.py tests/test_compiler.py tests/test_compile_runtime.py

sanitize:
	bash tests/sanitize/run.sh

clean:
	rm -rf .pybuild runtime/scantok/_native*.so runtime/*.egg-info

# code50k (issue 9): the training corpus (downloads pinned artifacts into corpus/downloads/,
# writes corpus/out/{train,heldout}.jsonl; see corpus/recipe.toml and corpus/LICENSES.md)
.PHONY: corpus
corpus:
	$(PYTHON) corpus/assemble.py

# code50k: retrain with scantok.train_bpe on corpus/out/train.jsonl (make corpus first) and check
# that runtime/scantok/data/code50k.stkz comes out byte for byte as committed (SHA-256 pinned)
.PHONY: train-code50k
train-code50k:
	$(PYTHON) corpus/train_code50k.py
