from scantok.load import check_hash as check_hash
from scantok.load import data_gym_to_mergeable_bpe_ranks as data_gym_to_mergeable_bpe_ranks
from scantok.load import dump_tiktoken_bpe as dump_tiktoken_bpe
from scantok.load import load_tiktoken_bpe as load_tiktoken_bpe
from scantok.load import read_file as read_file
from scantok.load import read_file_cached as read_file_cached
