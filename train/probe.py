#!/usr/bin/env python3
"""Qualitative probe of the shipped artifact: for a few text-side words, the nearest code-side terms.

    python3 train/probe.py hang leak slow crash
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mine import terms as dev_terms  # noqa: E402
from train import load_artifact  # noqa: E402

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "code-embed.bin")
header, vocab, towers = load_artifact(path)
index = {t: i for i, t in enumerate(vocab)}
_, s_c, R_c = towers[-1]
code = R_c.astype(np.float64) * s_c[:, None]
code /= np.maximum(np.linalg.norm(code, axis=1, keepdims=True), 1e-12)
_, s_q, R_q = towers[0]
TOP = 8000
words = sys.argv[1:] or ["hang", "leak", "slow", "crash", "timeout", "utf8"]
for w, ts in zip(words, dev_terms(words)):
    for t in ts:
        if t not in index:
            print(f"{w} -> {t}: not in vocabulary")
            continue
        q = R_q[index[t]].astype(np.float64) * s_q[index[t]]
        q /= np.linalg.norm(q)
        top = np.argsort(-(code[:TOP] @ q))[:12]  # among the TOP most frequent terms
        print(f"{w} -> {t}: " + ", ".join(vocab[i] for i in top))
