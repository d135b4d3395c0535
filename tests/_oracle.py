"""Python tiktoken as an offline oracle, shared by the tests and the benchmarks."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

# Python tiktoken is the oracle for token counts. It downloads its rank files at run time;
# the same files ship inside the tiktoken-rs crate, so they are placed in TIKTOKEN_CACHE_DIR
# under the names tiktoken looks for (sha1 of the URL), checked by sha256.
_RANKS = {
    "cl100k_base": ("9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
                    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": ("fb374d419588a4632f3f557e76b4b70aebbca790",
                   "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
}


def _tiktoken_rs_assets() -> Path:
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(["cargo", "metadata", "--format-version", "1", "--offline"],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    for pkg in json.loads(out)["packages"]:
        if pkg["name"] == "tiktoken-rs":
            return Path(pkg["manifest_path"]).parent / "assets"
    raise RuntimeError("tiktoken-rs is not in the cargo metadata")


@functools.cache
def load_oracle() -> dict:
    """Python tiktoken, offline. Fails (never skips) when it cannot be set up."""
    cache = Path(tempfile.mkdtemp(prefix="ctxfold-tiktoken-"))
    assets = _tiktoken_rs_assets()
    for name, (cache_name, sha) in _RANKS.items():
        src = assets / f"{name}.tiktoken"
        assert hashlib.sha256(src.read_bytes()).hexdigest() == sha, f"{src} is not the expected rank file"
        shutil.copy(src, cache / cache_name)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    import tiktoken

    return {name: tiktoken.get_encoding(name) for name in _RANKS}
