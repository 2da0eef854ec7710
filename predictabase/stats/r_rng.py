"""R's default random numbers, replayed in Python: Mersenne-Twister with set.seed's initial scrambling,
unif_rand's (0, 1) fix-up and R >= 3.6's sample.kind = "Rejection" (R_unif_index) -- enough to replay
`set.seed(s); sample(n)` and `cut(seq(1, n), breaks = k, labels = FALSE)`, so the folds of an R analysis
(Pimentel & Meister 2024's 10-fold CV) can be rebuilt exactly. Written from the documented behaviour of R's
RNG.c; checked against R 4.2.2's sample(10256) and sample(2745) after set.seed(42) and its cut()."""

import math

import numpy as np

_M32 = 0xFFFFFFFF


class RMersenneTwister:
    N, M = 624, 397

    def __init__(self, seed: int):
        s = seed & _M32
        for _ in range(50):  # initial scrambling
            s = (69069 * s + 1) & _M32
        init = []
        for _ in range(625):  # dummy[0] (=mti) + mt[624]
            s = (69069 * s + 1) & _M32
            init.append(s)
        self.mt = np.array(init[1:], dtype=np.uint32)
        self.mti = 624  # FixupSeeds: dummy[0] = 624
        self._buf = None

    def _twist(self):
        mt = [int(x) for x in self.mt]
        N, M = self.N, self.M
        for kk in range(N):
            y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % N] & 0x7FFFFFFF)
            mt[kk] = mt[(kk + M) % N] ^ (y >> 1) ^ (0x9908B0DF if (y & 1) else 0)
        self.mt = np.array(mt, dtype=np.uint32)
        y = self.mt.astype(np.uint64)
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        self._buf = (y & _M32).astype(np.float64)
        self.mti = 0

    def unif_rand(self) -> float:
        if self.mti >= self.N:
            self._twist()
        v = self._buf[self.mti] * 2.3283064365386963e-10
        self.mti += 1
        # fixup to (0,1)
        if v <= 0.0:
            return 0.5 * 2.328306437080797e-10
        if 1.0 - v <= 0.0:
            return 1.0 - 0.5 * 2.328306437080797e-10
        return v

    def _rbits(self, bits: int) -> int:
        v = 0
        n = 0
        while n <= bits:
            v1 = int(math.floor(self.unif_rand() * 65536))
            v = 65536 * v + v1
            n += 16
        return v & ((1 << bits) - 1)

    def unif_index(self, dn: int) -> int:
        if dn <= 0:
            return 0
        bits = int(math.ceil(math.log2(dn)))
        while True:
            dv = self._rbits(bits)
            if dn > dv:
                return dv

    def sample(self, n: int) -> np.ndarray:
        """R's sample(n) (no replacement), 1-based result."""
        x = list(range(n))
        out = np.empty(n, dtype=np.int64)
        m = n
        for i in range(n):
            j = self.unif_index(m)
            out[i] = x[j] + 1
            m -= 1
            x[j] = x[m]
        return out


def r_sample(seed: int, n: int) -> np.ndarray:
    return RMersenneTwister(seed).sample(n)


def r_cut_folds(n: int, k: int = 10) -> np.ndarray:
    """cut(seq(1, n), breaks=k, labels=FALSE): equal-width, right-closed intervals, 1-based labels."""
    x = np.arange(1, n + 1, dtype=np.float64)
    lo, hi = 1.0, float(n)
    dx = hi - lo
    by = dx / k
    breaks = lo + np.arange(k + 1) * by
    breaks[-1] = hi
    breaks[0], breaks[-1] = lo - dx / 1000, hi + dx / 1000
    # right-closed: label j if breaks[j-1] < x <= breaks[j]
    return np.searchsorted(breaks, x, side="left")


def r_folds(keep: np.ndarray, seed: int, k: int = 10) -> np.ndarray:
    """The fold (1..k) of each kept row of an R analysis that did `set.seed(seed); df <- df[sample(nrow(df)),]`
    on all rows, then dropped rows (`keep` False: na.omit), then `cut(seq(1, n), breaks = k, labels = FALSE)`
    over the kept rows in their shuffled order. Returned in the rows' original order."""
    n_total = len(keep)
    perm = r_sample(seed, n_total) - 1  # the shuffled order of the original rows
    pos = np.empty(n_total, dtype=np.int64)
    pos[perm] = np.arange(n_total)
    kept_pos = pos[keep]
    labels = r_cut_folds(len(kept_pos), k)
    rank = np.empty(len(kept_pos), dtype=np.int64)
    rank[np.argsort(kept_pos, kind="stable")] = np.arange(len(kept_pos))
    return labels[rank]
