"""Python tiktoken as an offline oracle, shared by the tests and the benchmarks."""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

from ctxfold import _core

# Python tiktoken is the oracle for token counts. It downloads its rank files at run time;
# the extension embeds the same files (from tiktoken-rs) and hands them out, so they are
# written into TIKTOKEN_CACHE_DIR under the names tiktoken looks for (sha1 of the URL),
# checked by sha256: an installed wheel is enough, no Rust toolchain, no network.
_RANKS = {
    "cl100k_base": ("9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("fb374d419588a4632f3f557e76b4b70aebbca790",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}


@functools.cache
def load_oracle() -> dict:
    """Python tiktoken, offline. Fails (never skips) when it cannot be set up."""
    cache = Path(tempfile.mkdtemp(prefix="ctxfold-tiktoken-"))
    for name, (cache_name, sha) in _RANKS.items():
        data = _core._rank_file(name)
        assert hashlib.sha256(data).hexdigest() == sha, f"the extension's {name} ranks are not the expected file"
        (cache / cache_name).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken

    return {name: tiktoken.get_encoding(name) for name in _RANKS}
