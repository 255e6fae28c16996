"""Byte-level BPE training on scantok's compiled scanners (``scantok.train_bpe``).

Modules: ``train`` (the API, ``TrainedBPE`` and the rules reproduced from HF's BpeTrainer),
``count`` (piece counting in threads), ``distributed`` (counting on a Dask cluster), ``export``
(.tiktoken and tokenizer.json), ``bytelevel`` (GPT-2's byte alphabet), ``errors``.
"""
from .errors import (BPETrainingError, EmptyCorpusError, InvalidUTF8Error, SpecialTokenError,
                     TrainingInputError, UnknownPatternError, VocabSizeError)
from .train import TrainedBPE, train_bpe

__all__ = ["train_bpe", "TrainedBPE", "BPETrainingError", "EmptyCorpusError", "InvalidUTF8Error",
           "SpecialTokenError", "TrainingInputError", "UnknownPatternError", "VocabSizeError"]
