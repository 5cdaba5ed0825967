"""Open a RocksDB database from Python with the options kvtune recommends.

    pip install rocksdict
    python3 examples/load_options.py kvtune-out/OPTIONS-portable /path/to/db

RocksDB loads options from a database folder's OPTIONS-NNNNNN file and, as
here, refuses options it does not know: OPTIONS-portable holds only what
kvtune sets or what differs from RocksDB's defaults, so RocksDB versions older
than kvtune's load it too. The block cache is not part of an OPTIONS file; its size is in the
file's header, and the cache is made here and handed to the loader.
"""

import os
import re
import shutil
import sys
import tempfile

from rocksdict import Cache, Env, Options, Rdict


def load(options_file):
    """The options in `options_file`, with the block cache its header names."""
    with open(options_file) as f:
        header = re.search(r"block_cache_size = (\d+)", f.read())
    cache = Cache(int(header.group(1)) if header else 32 << 20)
    with tempfile.TemporaryDirectory() as folder:
        shutil.copy(options_file, os.path.join(folder, "OPTIONS-000001"))
        options, _families = Options.load_latest(folder, Env(), False, cache)
    return options


def main(options_file, db_path):
    options = load(options_file)
    options.create_if_missing(True)
    db = Rdict(db_path, options)
    db[b"kvtune"] = b"tuned"
    assert db[b"kvtune"] == b"tuned"
    db.close()
    print(f"opened {db_path} with the options in {options_file}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: load_options.py OPTIONS_FILE DB_PATH")
    main(sys.argv[1], sys.argv[2])
