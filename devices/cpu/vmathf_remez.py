#!/usr/bin/env python3
"""devices/cpu/vmathf_remez.py: computes the polynomial coefficients in
vmathf.c (python3-mpmath): minimax fits by the Remez exchange algorithm,
rounded to float, and prints them as the C that vmathf_coefs.h holds.

  exp:  P(r) with e^r ~ 1 + r + r^2 P(r) on |r| <= 1.002 ln2/2, degree 5,
        weighted by max(|r|, 0.02): its error times |r| is what tanh and
        sigmoid's 1 - e^r loses, its error times r^2 what exp loses.
  log:  x = 2^e m, m in [0.75, 1.5), cut into 32 intervals (16 below 1, 16
        above) by m's top bits; per interval 1/c rounded to float (1 for
        the two intervals beside 1) and -log of that float as H + L, H a
        multiple of 2^-16 so that e ln2hi + H is exact; then
        log(m/c) = log1p(r) ~ r + r^2 Q(r), Q of degree 3, on the r that
        the intervals give.
  tanh: on each quarter binade [a, b) of [2^-4, 16), with c its middle,
        tanh(c + y) ~ H + L + P1 y + ... + P5 y^5, relative error, H + L
        the constant term to 48 bits (so that the sum's one rounding is
        the only large error); from 10 on, 1.  Below 2^-4,
        tanh(x) ~ x + x^3 (S0 + S1 x^2).

  python3 devices/cpu/vmathf_remez.py > /tmp/coeffs.c   (about a minute)
"""
import struct
import sys

import mpmath as mp

mp.mp.prec = 120


def f32(v):
    return struct.unpack('f', struct.pack('f', float(v)))[0]


def bits_float(b):
    return struct.unpack('f', struct.pack('I', b))[0]


def remez(g, w, degree, a, b, iters=10, grid=400):
    """min over p of degree `degree` of max |w (g - p)| on [a, b]: the
    coefficients (lowest first) and that maximum."""
    n = degree + 1
    pts = [a + (b - a) * (1 - mp.cos(mp.pi * (i + 0.5) / grid)) / 2 for i in range(grid)]
    gv = [g(x) for x in pts]
    wv = [w(x) for x in pts]
    idx = [int(round((grid - 1) * (1 - mp.cos(mp.pi * j / n)) / 2)) for j in range(n + 1)]
    best = None
    for _ in range(iters):
        A = mp.matrix(n + 1, n + 1)
        rhs = mp.matrix(n + 1, 1)
        for j, i in enumerate(idx):
            for q in range(n):
                A[j, q] = pts[i] ** q
            A[j, n] = (-1) ** j / wv[i]
            rhs[j] = gv[i]
        sol = mp.lu_solve(A, rhs)
        c = [sol[q] for q in range(n)]
        ev = [wv[i] * (gv[i] - mp.polyval(c[::-1], pts[i])) for i in range(grid)]
        mx = max(abs(v) for v in ev)
        if best is None or mx < best[1]:
            best = (c, mx)
        # the new reference: the largest error of each run of one sign
        runs, cur = [], [0]
        for i in range(1, grid):
            if mp.sign(ev[i]) == mp.sign(ev[cur[-1]]) or ev[i] == 0:
                cur.append(i)
            else:
                runs.append(cur)
                cur = [i]
        runs.append(cur)
        ext = [max(r, key=lambda i: abs(ev[i])) for r in runs]
        while len(ext) > n + 1:
            ext.pop(0 if abs(ev[ext[0]]) < abs(ev[ext[-1]]) else -1)
        if len(ext) < n + 1:
            break
        idx = ext
    return best


def cfloat(v):
    if v == 0:
        return '0.0f'
    mant, exp = float.hex(v).split('p')
    return mant.rstrip('0').rstrip('.') + 'p' + exp + 'f'


def exp_poly():
    half = mp.log(2) / 2 * mp.mpf('1.002')
    g = lambda r: mp.mpf(1) / 2 if r == 0 else (mp.exp(r) - 1 - r) / r ** 2
    w = lambda r: max(abs(r), mp.mpf('0.02'))
    c, err = remez(g, w, 5, -half, half, iters=15, grid=3000)
    c = [f32(x) for x in c]
    pts = [-half + 2 * half * i / 3000 for i in range(3001)]
    rel = max(abs(g(r) - mp.polyval([mp.mpf(x) for x in c[::-1]], r)) * r * r / mp.exp(r) for r in pts)
    print('/* exp: P0..P5; relative error of e^r with these floats: 2^%.1f */' % float(mp.log(rel, 2)))
    print('static const float exp_p[6] = {%s};' % ', '.join(cfloat(x) for x in c))


def tanh_small():
    g = lambda s: mp.mpf(-1) / 3 if s == 0 else (mp.tanh(mp.sqrt(s)) - mp.sqrt(s)) / s ** mp.mpf(1.5)
    w = lambda s: mp.mpf(1) if s == 0 else s ** mp.mpf(1.5) / mp.tanh(mp.sqrt(s))
    c, err = remez(g, w, 1, mp.mpf(0), mp.mpf(2) ** -8)
    print('/* tanh below 2^-4: S0, S1; relative error 2^%.1f */' % float(mp.log(err, 2)))
    print('static const float tanh_s[2] = {%s};' % ', '.join(cfloat(f32(x)) for x in c))


def tanh_table(degree=5):
    cols = [[] for _ in range(degree + 2)]
    worst = -999
    for i in range(32):
        lo, hi = bits_float(0x3d800000 + (i << 21)), bits_float(0x3d800000 + ((i + 1) << 21))
        mid = mp.mpf(bits_float(0x3d800000 + (i << 21) + (1 << 20)))
        a, b = mp.mpf(lo) - mid, mp.mpf(hi) - mid
        g = lambda y: mp.tanh(mid + y)
        w = lambda y: 1 / mp.tanh(mid + y)
        c = [mp.mpf(1)] + [mp.mpf(0)] * degree if lo >= 10 else remez(g, w, degree, a, b)[0]
        h = f32(c[0])
        row = [h, f32(c[0] - mp.mpf(h))] + [f32(x) for x in c[1:]]
        poly = [mp.mpf(row[0]) + mp.mpf(row[1])] + [mp.mpf(x) for x in row[2:]]
        pts = [a + (b - a) * q / 1000 for q in range(1001)]
        err = max(abs(w(y) * (g(y) - mp.polyval(poly[::-1], y))) for y in pts)
        worst = max(worst, float(mp.log(err, 2)))
        for j, v in enumerate(row):
            cols[j].append(v)
        print('tanh interval %d [%g, %g): relative error 2^%.1f' % (i, lo, hi, float(mp.log(err, 2))),
              file=sys.stderr)
    print('/* tanh on the quarter binades of [2^-4, 16): H, L, P1..P%d, each for the 32 intervals;'
          ' relative error at most 2^%.1f */' % (degree, worst))
    print('static const float tanh_tab[%d][32] __attribute__((aligned(64), unused)) = {' % (degree + 2))
    for col in cols:
        print('    {' + ', '.join(cfloat(v) for v in col) + '},')
    print('};')
    print('/* the same, one interval a row (H, L, P1..P5, 0), for loads of a row per lane */')
    print('static const float tanh_rows[32][8] __attribute__((aligned(32), unused)) = {')
    for i in range(32):
        print('    {' + ', '.join([cfloat(col[i]) for col in cols] + ['0.0f'] * (8 - len(cols))) + '},')
    print('};')


def log_table():
    inv, hi, lo = [], [], []
    rmin = rmax = 0
    for i in range(32):
        a, b = bits_float(0x3f400000 + (i << 18)), bits_float(0x3f400000 + ((i + 1) << 18))
        ic = 1.0 if i in (15, 16) else f32(2 / (mp.mpf(a) + mp.mpf(b)))
        minus_log = -mp.log(mp.mpf(ic))
        h = float(mp.nint(minus_log * 2 ** 16) / 2 ** 16)
        inv.append(ic)
        hi.append(h)
        lo.append(f32(minus_log - mp.mpf(h)))
        rmin = min(rmin, mp.mpf(a) * mp.mpf(ic) - 1)
        rmax = max(rmax, mp.mpf(b) * mp.mpf(ic) - 1)
    g = lambda r: mp.mpf(-1) / 2 if r == 0 else (mp.log1p(r) - r) / r ** 2
    w = lambda r: mp.mpf(1) if r == 0 else r ** 2 / mp.log1p(r)
    c, err = remez(g, w, 3, rmin * mp.mpf('1.01'), rmax * mp.mpf('1.01'), grid=600)
    ln2hi = float(mp.nint(mp.log(2) * 2 ** 16) / 2 ** 16)
    print('/* log: ln2 as a multiple of 2^-16 and the rest; Q0..Q3 (r in [%.4g, %.4g], relative'
          ' error 2^%.1f); per interval 1/c, H, L */' % (float(rmin), float(rmax), float(mp.log(err, 2))))
    print('static const float log_ln2[2] = {%s, %s};' % (cfloat(ln2hi), cfloat(f32(mp.log(2) - mp.mpf(ln2hi)))))
    print('static const float log_q[4] = {%s};' % ', '.join(cfloat(f32(x)) for x in c))
    print('static const float log_tab[3][32] __attribute__((aligned(64))) = {')
    for col in (inv, hi, lo):
        print('    {' + ', '.join(cfloat(v) for v in col) + '},')
    print('};')


if __name__ == '__main__':
    exp_poly()
    log_table()
    tanh_small()
    tanh_table()
