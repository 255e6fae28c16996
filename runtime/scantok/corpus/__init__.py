"""Token shards from corpora: ``encode_files`` turns JSON Lines, text and Parquet files
(gzip/zstd too) into token shards plus an index, on every local core or on a Dask cluster,
resumably; ``open`` reads them back.

>>> import scantok.corpus
>>> sorted(n for n in scantok.corpus.__all__ if n[0].islower())
['encode_files', 'open']
"""
from .errors import CorpusError, CorpusInputError, CorpusStateError
from .pipeline import EncodeReport, encode_files
from .progress import Progress, ProgressBar
from .reader import Corpus, DocumentSource, open

__all__ = ["encode_files", "open", "Corpus", "DocumentSource", "EncodeReport", "Progress", "ProgressBar",
           "CorpusError", "CorpusInputError", "CorpusStateError"]
