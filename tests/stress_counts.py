"""A long differential run of ctxfold's token counts against Python tiktoken (not part of the
pytest suite: it takes longer than a test should).

    python tests/stress_counts.py [N]      (default 30000 random strings)

Random strings drawn from many Unicode categories (whitespace of every kind, marks, digits of
other scripts, emoji sequences, special-token text), then slices of up to 6,000 characters of
this repository's source and docs with doubled spaces. Prints the number of mismatches; exits 1
if there is any.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from _oracle import load_oracle
from ctxfold import count_text

POOLS = [
    " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u2001\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
    "abcXYZ'sdtmlrve",
    "0123456789٠١٢३४५ⅫⅩ½²",
    "!?.,;:-_/\\|@#$%^&*()[]{}<>\"'`~+=",
    "éñüßØæœçÅ",
    "\u0301\u0308\u0327\u20dd",
    "日本語中文한국어",
    "😀👍🏽🇫🇷👨‍👩‍👧",
    "\u200b\u200c\u200d\ufeff",
    "ΣσςΑΩабвгдЖ",
]


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30_000
    oracle = load_oracle()
    rng = random.Random(1)
    root = Path(__file__).resolve().parent.parent
    corpus = "".join(p.read_text() for p in [root / "README.md", root / "docs" / "format.md",
                                             root / "rust" / "core" / "src" / "tokens" / "pretokenize.rs"])
    texts = []
    for _ in range(n):
        s = "".join(rng.choice(rng.choice(POOLS)) for _ in range(rng.randint(1, 60)))
        texts.append(s.replace("a", "<|endoftext|>", 1) if rng.random() < 0.2 else s)
    for _ in range(n // 10):
        a = rng.randrange(len(corpus))
        s = corpus[a:a + rng.randrange(1, 6000)]
        texts.append(s.replace(" ", "  ").replace("\n", " \n") if rng.random() < 0.3 else s)
    t = time.perf_counter()
    bad = 0
    for s in texts:
        for name, enc in oracle.items():
            if len(enc.encode_ordinary(s)) != count_text(s, name):
                bad += 1
                if bad <= 5:
                    print("mismatch", name, repr(s[:80]))
    print(f"{len(texts):,} texts x {len(oracle)} encodings: {bad} mismatches ({time.perf_counter() - t:.1f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
