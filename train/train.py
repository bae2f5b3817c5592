#!/usr/bin/env python3
"""Train the static code/text embedding model on mined pairs, validate it, export it.

Model: one vector per term (int8 per row at export) and one pooling weight per term, per tower.
Embedding of a text = L2-normalise(sum over its first MAX_TERMS in-vocabulary term occurrences
of weight[t] * vector[t]). Tower 0 embeds the text/query side, tower 1 (if towers=2) the code side.

Loss: in-batch negatives InfoNCE (symmetric), Matryoshka over dimension prefixes, lazy Adam.
Resumable: checkpoints under .tmp/train/ckpt/<run-name>/.

Usage: python3 train/train.py [--dim 256 --vocab 60000 --towers 1 ...] [--export]
"""
import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import struct
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TMP = os.path.join(ROOT, ".tmp", "train")
PAIRS_DIR = os.path.join(TMP, "pairs")
OUT_DIR = os.path.join(ROOT, "train", "out")


def log(*a):
    print(time.strftime("[%H:%M:%S]"), *a, flush=True)


# ------------------------------------------------------------------ data
def load_pairs():
    metas, pairs = [], []
    for path in sorted(glob.glob(os.path.join(PAIRS_DIR, "*.jsonl"))):
        with open(path) as f:
            meta = json.loads(f.readline())["meta"]
            metas.append(meta)
            for line in f:
                p = json.loads(line)
                p["split"] = meta["split"]
                pairs.append(p)
    return metas, pairs


def build_vocab(train_pairs, size, min_df):
    df = {}
    for p in train_pairs:
        for t in set(p["text_terms"]):
            df[t] = df.get(t, 0) + 1
        for t in set(p["code_terms"]):
            df[t] = df.get(t, 0) + 1
    items = [(c, t) for t, c in df.items() if c >= min_df and len(t.encode()) <= 255]
    items.sort(key=lambda x: (-x[0], x[1]))
    items = items[:size]
    terms = [t for _, t in items]
    dfs = np.array([c for c, _ in items], dtype=np.float64)
    n_docs = 2 * len(train_pairs)
    return terms, dfs, n_docs


def encode(pairs, side, index, max_terms):
    """CSR of the first max_terms in-vocabulary term ids of each example."""
    ids, off = [], [0]
    for p in pairs:
        row = [index[t] for t in p[side] if t in index][:max_terms]
        ids.extend(row)
        off.append(len(ids))
    return np.array(ids, dtype=np.int32), np.array(off, dtype=np.int64)


class Side:
    def __init__(self, ids, off):
        self.ids, self.off = ids, off

    def batch(self, idx):
        lens = self.off[idx + 1] - self.off[idx]
        flat = np.concatenate([self.ids[self.off[i]:self.off[i + 1]] for i in idx]) if len(idx) else \
            np.zeros(0, np.int32)
        uniq, inv = np.unique(flat, return_inverse=True)
        rows = np.repeat(np.arange(len(idx)), lens)
        counts = np.bincount(rows * len(uniq) + inv, minlength=len(idx) * len(uniq))
        return uniq, counts.reshape(len(idx), len(uniq)).astype(np.float32)


def embed_all(side, W, E, chunk=2048):
    n = len(side.off) - 1
    out = np.zeros((n, E.shape[1]), dtype=np.float32)
    for s in range(0, n, chunk):
        idx = np.arange(s, min(n, s + chunk))
        uniq, C = side.batch(idx)
        out[idx] = (C * W[uniq][None, :]) @ E[uniq]
    return out


def normalize(X):
    return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)


# ------------------------------------------------------------------ validation
def bm25_scores(q_terms, doc_terms, k1=1.2, b=0.75):
    """Dense (len(q) x len(docs)) BM25 matrix over raw term lists."""
    n = len(doc_terms)
    post = {}
    dl = np.array([len(d) for d in doc_terms], dtype=np.float64)
    avg = max(dl.mean(), 1.0)
    for j, d in enumerate(doc_terms):
        tf = {}
        for t in d:
            tf[t] = tf.get(t, 0) + 1
        for t, c in tf.items():
            post.setdefault(t, ([], []))
            post[t][0].append(j)
            post[t][1].append(c)
    plist = {}
    for t, (js, cs) in post.items():
        js, cs = np.array(js), np.array(cs, dtype=np.float64)
        idf = math.log(1 + (n - len(js) + 0.5) / (len(js) + 0.5))
        plist[t] = (js, idf * cs * (k1 + 1) / (cs + k1 * (1 - b + b * dl[js] / avg)))
    S = np.zeros((len(q_terms), n), dtype=np.float32)
    for i, q in enumerate(q_terms):
        for t in set(q):
            if t in plist:
                js, w = plist[t]
                S[i, js] += w
    return S


def ranks_from_scores(S, target, exclude):
    """1-based rank of target per row; entries in exclude (list of index arrays) are removed."""
    S = S.copy()
    for i, ex in enumerate(exclude):
        if len(ex):
            S[i, ex] = -np.inf
    tgt = S[np.arange(len(target)), target]
    return 1 + (S > tgt[:, None]).sum(1)


def metrics(r):
    r = np.asarray(r, dtype=np.float64)
    return {"R@1": float((r <= 1).mean()), "R@10": float((r <= 10).mean()), "MRR": float((1 / r).mean()),
            "n": int(len(r))}


class ValSet:
    """Per validation repository: queries, its unique code candidates, targets, same-group exclusions."""

    def __init__(self, pairs, index, max_terms, max_queries, seed):
        rng = np.random.RandomState(seed)
        self.repos = []
        by_repo = {}
        for p in pairs:
            by_repo.setdefault(p["repo"], []).append(p)
        for repo in sorted(by_repo):
            ps = by_repo[repo]
            code_key, codes = {}, []
            for p in ps:
                k = tuple(p["code_terms"])
                if k not in code_key:
                    code_key[k] = len(codes)
                    codes.append(p)
            group_codes = {}
            for p in ps:
                group_codes.setdefault(p["group"], set()).add(code_key[tuple(p["code_terms"])])
            qidx = np.arange(len(ps))
            if len(ps) > max_queries:
                qidx = np.sort(rng.choice(len(ps), max_queries, replace=False))
            qs = [ps[i] for i in qidx]
            target = np.array([code_key[tuple(p["code_terms"])] for p in qs])
            exclude = [np.array(sorted(group_codes[p["group"]] - {t}), dtype=np.int64)
                       for p, t in zip(qs, target)]
            q_side = Side(*encode(qs, "text_terms", index, max_terms))
            c_side = Side(*encode(codes, "code_terms", index, max_terms))
            bm = bm25_scores([p["text_terms"] for p in qs], [p["code_terms"] for p in codes])
            bm_r = ranks_from_scores(bm, target, exclude)
            self.repos.append(dict(repo=repo, lang=ps[0]["lang"], qs=qs, kinds=np.array([p["kind"] for p in qs]),
                                   target=target, exclude=exclude, q=q_side, c=c_side, bm=bm, bm_r=bm_r,
                                   n_codes=len(codes)))

    def evaluate(self, towers_params, dims=None, fuse=True):
        """towers_params: [(W_text, E_text), (W_code, E_code)]. Returns table of metrics."""
        (Wq, Eq), (Wc, Ec) = towers_params
        res = {}
        for R in self.repos:
            Q = embed_all(R["q"], Wq, Eq)
            C = embed_all(R["c"], Wc, Ec)
            row = {}
            for d in (dims or [Q.shape[1]]):
                S = normalize(Q[:, :d]) @ normalize(C[:, :d]).T
                r = ranks_from_scores(S, R["target"], R["exclude"])
                row[f"model@{d}"] = r
                if fuse and d == Q.shape[1]:
                    row["fused"] = ranks_from_scores(rrf(S, R["bm"]), R["target"], R["exclude"])
            row["bm25"] = R["bm_r"]
            res[R["repo"]] = (R, row)
        return res


def rrf(S1, S2, k=60.0):
    def rk(S):
        order = np.argsort(-S, axis=1, kind="stable")
        r = np.empty_like(order)
        np.put_along_axis(r, order, np.arange(S.shape[1])[None, :].repeat(S.shape[0], 0), axis=1)
        return r + 1
    return 1.0 / (k + rk(S1)) + 1.0 / (k + rk(S2))


def summarize(res):
    """Macro average over repositories, plus per language and per kind."""
    table = {}
    systems = None
    for repo, (R, row) in res.items():
        systems = list(row)
        table[repo] = {s: metrics(row[s]) for s in row}
        for kind in (1, 2):
            m = R["kinds"] == kind
            if m.any():
                table[f"{repo} kind{kind}"] = {s: metrics(row[s][m]) for s in row}
    macro = {}
    for s in systems:
        vals = [table[r][s] for r in res]
        macro[s] = {k: float(np.mean([v[k] for v in vals])) for k in ("R@1", "R@10", "MRR")}
        macro[s]["n"] = int(sum(v["n"] for v in vals))
    table["MACRO"] = macro
    return table


def print_table(table, title):
    log(title)
    systems = list(table["MACRO"])
    print(f"{'':42s}" + "".join(f"{s:>24s}" for s in systems))
    print(f"{'':42s}" + "".join(f"{'R@1  R@10  MRR':>24s}" for _ in systems))
    for key, row in table.items():
        cells = "".join(f"{row[s]['R@1']:8.3f}{row[s]['R@10']:6.3f}{row[s]['MRR']:6.3f}   " for s in systems)
        n = row[systems[0]]["n"]
        print(f"{key[:34]:34s} n={n:<5d}" + cells)
    sys.stdout.flush()


# ------------------------------------------------------------------ model / training
class Adam:
    def __init__(self, shape, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.m = np.zeros(shape, np.float32)
        self.v = np.zeros(shape, np.float32)
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps

    def step(self, P, rows, g, t, lr_scale=1.0):
        m = self.b1 * self.m[rows] + (1 - self.b1) * g
        v = self.b2 * self.v[rows] + (1 - self.b2) * g * g
        self.m[rows], self.v[rows] = m, v
        mh = m / (1 - self.b1 ** t)
        vh = v / (1 - self.b2 ** t)
        P[rows] -= (self.lr * lr_scale) * mh / (np.sqrt(vh) + self.eps)


def tower_forward(W, E, uniq, C):
    S = C * W[uniq][None, :]
    Eu = E[uniq]
    return S, Eu, S @ Eu


def tower_backward(W, E, uniq, C, S, Eu, gX):
    gE = S.T @ gX                                  # (U, D)
    gW = ((gX @ Eu.T) * C).sum(0)                  # (U,)
    return gE, gW


def contrastive_grads(Xq, Xc, groups, dims, tau):
    """Symmetric InfoNCE over each Matryoshka prefix; returns loss, dXq, dXc."""
    B = Xq.shape[0]
    same = groups[:, None] == groups[None, :]
    off = same & ~np.eye(B, dtype=bool)
    gq = np.zeros_like(Xq)
    gc = np.zeros_like(Xc)
    total = 0.0
    for d in dims:
        xq, xc = Xq[:, :d], Xc[:, :d]
        nq = np.maximum(np.linalg.norm(xq, axis=1, keepdims=True), 1e-12)
        nc = np.maximum(np.linalg.norm(xc, axis=1, keepdims=True), 1e-12)
        q, c = xq / nq, xc / nc
        L = (q @ c.T) / tau
        L[off] = -1e9
        # rows: text -> code
        Pr = np.exp(L - L.max(1, keepdims=True))
        Pr /= Pr.sum(1, keepdims=True)
        Pc = np.exp(L - L.max(0, keepdims=True))
        Pc /= Pc.sum(0, keepdims=True)
        diag = np.arange(B)
        total += float(-np.log(Pr[diag, diag] + 1e-30).mean() - np.log(Pc[diag, diag] + 1e-30).mean()) / 2
        G = (Pr + Pc) / (2 * B)
        G[diag, diag] -= 1.0 / B
        G /= tau
        dq = G @ c
        dc = G.T @ q
        # through the normalisation
        gq[:, :d] += (dq - q * (q * dq).sum(1, keepdims=True)) / nq
        gc[:, :d] += (dc - c * (c * dc).sum(1, keepdims=True)) / nc
    k = len(dims)
    return total / k, gq / k, gc / k


def run_name(a):
    # --export does not change the model: an exporting run resumes (or reuses) the same checkpoint
    h = hashlib.sha1(json.dumps(dict(vars(a), export=False), sort_keys=True).encode()).hexdigest()[:8]
    return f"d{a.dim}-v{a.vocab}-t{a.towers}-m{a.max_terms}-{h}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=60000)
    ap.add_argument("--min-df", type=int, default=3)
    ap.add_argument("--towers", type=int, default=1, choices=(1, 2))
    ap.add_argument("--max-terms", type=int, default=256)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--epochs", type=float, default=4)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--lr-w", type=float, default=1e-2)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--init-std", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--max-minutes", type=float, default=28.0)
    ap.add_argument("--val-queries", type=int, default=2000)
    ap.add_argument("--eval-every", type=int, default=0)
    ap.add_argument("--batch-by", choices=("none", "repo"), default="repo",
                    help="repo: every batch from one repository (in-batch negatives as hard as validation's)")
    ap.add_argument("--dropout", type=float, default=0.0, help="drop term occurrences (per example and term) in training")
    ap.add_argument("--decay-to-init", type=float, default=0.0, help="L2 pull of trained rows back to their random init")
    ap.add_argument("--export", action="store_true", help="write train/out/code-embed.bin")
    ap.add_argument("--no-resume", action="store_true")
    a = ap.parse_args()
    t_start = time.time()
    dims = [d for d in (32, 64, 128, 256, 512) if d < a.dim] + [a.dim]

    metas, pairs = load_pairs()
    train = [p for p in pairs if p["split"] == "train"]
    val = [p for p in pairs if p["split"] == "val"]
    log(f"pairs: train {len(train)} val {len(val)} from {len(metas)} repositories")
    terms, dfs, n_docs = build_vocab(train, a.vocab, a.min_df)
    index = {t: i for i, t in enumerate(terms)}
    V, D = len(terms), a.dim
    log(f"vocab {V} (min df {a.min_df}), dim {D}, towers {a.towers}, max_terms {a.max_terms}")

    tq = Side(*encode(train, "text_terms", index, a.max_terms))
    tc = Side(*encode(train, "code_terms", index, a.max_terms))
    keep = np.nonzero((np.diff(tq.off) > 0) & (np.diff(tc.off) > 0))[0]
    gid = {}
    groups = np.array([gid.setdefault(p["repo"] + p["group"], len(gid)) for p in train], dtype=np.int64)
    valset = ValSet(val, index, a.max_terms, a.val_queries, a.seed)
    log(f"validation: {len(valset.repos)} repositories; setup {time.time() - t_start:.0f}s")

    rng = np.random.RandomState(a.seed)
    idf = np.log((n_docs + 1) / (dfs + 1)).astype(np.float32) + 1.0
    E0 = (rng.randn(V, D) * a.init_std).astype(np.float32)
    params = [[idf.copy(), E0.copy()]]
    if a.towers == 2:
        params.append([idf.copy(), E0.copy()])   # same init: untrained rows keep lexical identity
    opt = [(Adam((V,), a.lr_w), Adam((V, D), a.lr)) for _ in params]

    name = run_name(a)
    ck_dir = os.path.join(TMP, "ckpt", name)
    os.makedirs(ck_dir, exist_ok=True)
    ck_path = os.path.join(ck_dir, "ckpt.npz")
    step = 0
    repo_of = np.array([gid_r.setdefault(p["repo"], len(gid_r)) for gid_r in [{}] for p in train])

    def epoch_batches(epoch):
        r = np.random.RandomState(a.seed * 1000 + epoch)
        if a.batch_by == "none":
            perm = r.permutation(keep)
            return [perm[i * a.batch:(i + 1) * a.batch] for i in range(len(keep) // a.batch)]
        out = []
        for rid in range(repo_of.max() + 1):
            ids = r.permutation(keep[repo_of[keep] == rid])
            nb = max(1, int(round(len(ids) / a.batch)))
            out.extend(np.array_split(ids, nb))
        order = r.permutation(len(out))
        return [out[i] for i in order]

    steps_per_epoch = len(epoch_batches(0))
    total_steps = int(a.epochs * steps_per_epoch)
    if os.path.exists(ck_path) and not a.no_resume:
        z = np.load(ck_path)
        step = int(z["step"])
        for k, (P, (ow, oe)) in enumerate(zip(params, opt)):
            P[0], P[1] = z[f"W{k}"], z[f"E{k}"]
            ow.m, ow.v, oe.m, oe.v = z[f"mw{k}"], z[f"vw{k}"], z[f"me{k}"], z[f"ve{k}"]
        log(f"resumed {name} at step {step}/{total_steps}")
    else:
        log(f"run {name}: {total_steps} steps ({steps_per_epoch}/epoch)")

    def save():
        blob = {"step": step}
        for k, (P, (ow, oe)) in enumerate(zip(params, opt)):
            blob.update({f"W{k}": P[0], f"E{k}": P[1], f"mw{k}": ow.m, f"vw{k}": ow.v,
                         f"me{k}": oe.m, f"ve{k}": oe.v})
        np.savez(ck_path + ".tmp.npz", **blob)
        os.replace(ck_path + ".tmp.npz", ck_path)

    def tower_pair():
        return (params[0], params[-1])

    if a.eval_every and step == 0:
        tab = summarize(valset.evaluate(tower_pair(), fuse=False))
        log(f"eval step 0 (random init = idf-weighted overlap): model MRR {tab['MACRO'][f'model@{D}']['MRR']:.4f} bm25 MRR {tab['MACRO']['bm25']['MRR']:.4f}")
    cur_epoch = [None, None]
    t_train = time.time()
    last_save = time.time()
    ema = None
    while step < total_steps:
        epoch, pos = divmod(step, steps_per_epoch)
        if cur_epoch[0] != epoch:
            cur_epoch[:] = [epoch, epoch_batches(epoch)]
        idx = cur_epoch[1][pos]
        uq, Cq = tq.batch(idx)
        uc, Cc = tc.batch(idx)
        if a.dropout > 0:
            drng = np.random.RandomState(a.seed * 7919 + step)
            Cq = Cq * (drng.random_sample(Cq.shape) >= a.dropout)
            Cc = Cc * (drng.random_sample(Cc.shape) >= a.dropout)
        Pq, Pc = tower_pair()
        Sq, Equ, Xq = tower_forward(Pq[0], Pq[1], uq, Cq)
        Sc, Ecu, Xc = tower_forward(Pc[0], Pc[1], uc, Cc)
        loss, gXq, gXc = contrastive_grads(Xq, Xc, groups[idx], dims, a.tau)
        gEq, gWq = tower_backward(Pq[0], Pq[1], uq, Cq, Sq, Equ, gXq)
        gEc, gWc = tower_backward(Pc[0], Pc[1], uc, Cc, Sc, Ecu, gXc)
        if a.decay_to_init > 0:
            gEq += a.decay_to_init * (Equ - E0[uq])
            gEc += a.decay_to_init * (Ecu - E0[uc])
        step += 1
        lr_scale = min(1.0, step / 200) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / total_steps)))
        if a.towers == 1:
            # merge both sides' gradients for the shared table
            u = np.union1d(uq, uc)
            gE = np.zeros((len(u), D), np.float32)
            gW = np.zeros(len(u), np.float32)
            iq, ic = np.searchsorted(u, uq), np.searchsorted(u, uc)
            gE[iq] += gEq
            gE[ic] += gEc
            gW[iq] += gWq
            gW[ic] += gWc
            opt[0][1].step(params[0][1], u, gE, step, lr_scale)
            opt[0][0].step(params[0][0], u, gW, step, lr_scale)
            np.maximum(params[0][0], 0, out=params[0][0])
        else:
            for k, (u, gE, gW) in enumerate(((uq, gEq, gWq), (uc, gEc, gWc))):
                opt[k][1].step(params[k][1], u, gE, step, lr_scale)
                opt[k][0].step(params[k][0], u, gW, step, lr_scale)
                np.maximum(params[k][0], 0, out=params[k][0])
        ema = loss if ema is None else 0.98 * ema + 0.02 * loss
        if step % 50 == 0 or step == total_steps:
            el = time.time() - t_train
            log(f"step {step}/{total_steps} epoch {epoch} loss {ema:.4f} ({el / 60:.1f} min)")
        if time.time() - last_save > 120:
            save()
            last_save = time.time()
        if a.eval_every and step % a.eval_every == 0:
            tab = summarize(valset.evaluate(tower_pair(), fuse=False))
            log(f"eval step {step}: model MRR {tab['MACRO'][f'model@{D}']['MRR']:.4f} bm25 MRR {tab['MACRO']['bm25']['MRR']:.4f}")
        if (time.time() - t_start) / 60 > a.max_minutes:
            log(f"time budget reached at step {step}; stopping early")
            break
    save()
    train_minutes = (time.time() - t_train) / 60
    log(f"training done: {step} steps in {train_minutes:.1f} min")

    res = valset.evaluate(tower_pair(), dims=dims)
    table = summarize(res)
    print_table(table, "validation (float32)")

    # ---------------- quantize
    qparams = []
    for W, E in params:
        scale = np.abs(E).max(1) / 127.0
        scale[scale == 0] = 1.0
        rows = np.clip(np.round(E / scale[:, None]), -127, 127).astype(np.int8)
        qparams.append((W.astype(np.float32), scale.astype(np.float32), rows))
    deq = [(W, rows.astype(np.float32) * s[:, None]) for W, s, rows in qparams]
    qres = valset.evaluate((deq[0], deq[-1]), dims=dims)
    qtable = summarize(qres)
    print_table(qtable, "validation (int8 quantized)")

    result = {"run": name, "args": vars(a), "vocab": V, "dims": dims, "train_pairs": len(keep),
              "steps": step, "train_minutes": round(train_minutes, 1),
              "total_minutes": round((time.time() - t_start) / 60, 1),
              "float": table, "int8": qtable}
    with open(os.path.join(ck_dir, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    log(f"wrote {os.path.join(ck_dir, 'result.json')}")

    if a.export:
        export(a, terms, qparams, qtable, metas, val, index, dims)


def export(a, terms, qparams, qtable, metas, val, index, dims):
    os.makedirs(OUT_DIR, exist_ok=True)
    M = qtable["MACRO"]
    validation = {"macro": {k: {m: round(v[m], 4) for m in ("R@1", "R@10", "MRR")} for k, v in M.items()},
                  "queries": M["bm25"]["n"],
                  "repos": [m["repo"] for m in metas if m["split"] == "val"]}
    header = {"dim": a.dim, "vocab": len(terms), "towers": a.towers, "max_terms": a.max_terms,
              "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "seed": a.seed, "validation": validation, "sources": len(metas)}
    hb = json.dumps(header, sort_keys=True).encode()
    path = os.path.join(OUT_DIR, "code-embed.bin")
    with open(path + ".tmp", "wb") as f:
        f.write(b"CLSEMB01")
        f.write(struct.pack("<I", len(hb)))
        f.write(hb)
        for t in terms:
            b = t.encode()
            f.write(struct.pack("<B", len(b)))
            f.write(b)
        for W, s, rows in qparams:
            f.write(W.astype("<f4").tobytes())
            f.write(s.astype("<f4").tobytes())
            f.write(rows.astype(np.int8).tobytes())
    os.replace(path + ".tmp", path)
    log(f"wrote {path} ({os.path.getsize(path) / 1e6:.2f} MB)")
    check(path, val)


def load_artifact(path):
    """Reader of the artifact, independent of the training code (mirrors the Rust loader)."""
    data = open(path, "rb").read()
    assert data[:8] == b"CLSEMB01"
    (hl,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12:12 + hl])
    pos = 12 + hl
    V, D, T = header["vocab"], header["dim"], header["towers"]
    terms = []
    for _ in range(V):
        n = data[pos]
        terms.append(data[pos + 1:pos + 1 + n].decode())
        pos += 1 + n
    towers = []
    for _ in range(T):
        W = np.frombuffer(data, "<f4", V, pos); pos += 4 * V
        s = np.frombuffer(data, "<f4", V, pos); pos += 4 * V
        R = np.frombuffer(data, np.int8, V * D, pos).reshape(V, D); pos += V * D
        towers.append((W.astype(np.float64), s.astype(np.float64), R))
    assert pos == len(data), (pos, len(data))
    return header, terms, towers


def embed_terms(term_list, header, index, tower):
    W, s, R = tower
    ids = [index[t] for t in term_list if t in index][:header["max_terms"]]
    v = np.zeros(header["dim"])
    for i in ids:
        v += W[i] * s[i] * R[i].astype(np.float64)
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def check(path, val):
    """export_check.json: fixed validation pairs, their cosines and ranks under the shipped artifact."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mine import terms as dev_terms
    header, terms, towers = load_artifact(path)
    index = {t: i for i, t in enumerate(terms)}
    rng = np.random.RandomState(7)
    cands = [p for p in val if len(p["text"]) < 300 and len(p["code"]) < 800]
    by_lang = {}
    for i in rng.permutation(len(cands)):
        p = cands[i]
        if len(by_lang.get(p["lang"], [])) < 2 and all(q["group"] != p["group"] for q in by_lang.get(p["lang"], [])):
            by_lang.setdefault(p["lang"], []).append(p)
    langs = sorted(by_lang)
    chosen = ([by_lang[l][0] for l in langs] + [by_lang[l][1] for l in langs if len(by_lang[l]) > 1])[:10]
    toks = dev_terms([p["text"] for p in chosen] + [p["code"] for p in chosen])
    n = len(chosen)
    tq, tc = towers[0], towers[-1]
    Q = np.array([embed_terms(toks[i], header, index, tq) for i in range(n)])
    C = np.array([embed_terms(toks[n + i], header, index, tc) for i in range(n)])
    S = Q @ C.T
    out = {"artifact": os.path.basename(path), "header": {k: header[k] for k in ("dim", "vocab", "towers", "max_terms")},
           "note": "cosine = dot(L2norm(sum w*scale*row over text terms, tower 0), L2norm(same over code terms, "
                   "tower T-1)); rank = 1-based rank of the pair's own code among all codes listed here",
           "pairs": []}
    for i, p in enumerate(chosen):
        rank = int(1 + (S[i] > S[i, i]).sum())
        out["pairs"].append({"repo": p["repo"], "lang": p["lang"], "kind": p["kind"], "text": p["text"],
                             "code": p["code"], "text_terms": toks[i], "code_terms": toks[n + i],
                             "cosine": round(float(S[i, i]), 6), "rank": rank,
                             "cosines_to_all_codes": [round(float(x), 6) for x in S[i]]})
    with open(os.path.join(ROOT, "train", "export_check.json"), "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
    log(f"wrote train/export_check.json ({n} pairs, ranks {[q['rank'] for q in out['pairs']]})")


if __name__ == "__main__":
    main()
