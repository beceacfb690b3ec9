/* Fast decimal formatting of doubles for the trajectory and frame writers
 * (tstep/numfmt.h).
 *
 * ts_format_double(buf, x, P) writes what printf("%.*g", P, x) writes
 * (P = 1..17), and with P = 0 the shortest decimal that reads back (strtod)
 * as exactly x, laid out as %.17g would lay it out (exponent form below
 * 1e-4 or from 1e17; no trailing zeros).
 *
 * Method: for 1e-15 <= |x| < 1e15, x = m 2^-s with m < 2^53, so V = x 10^k
 * = m 5^k / 2^(s - k), scaled to 17 integer digits (k <= 31, 5^31 < 2^72),
 * is an exact 128-bit fraction: its integer part F and remainder give correct
 * rounding to any number of digits with no error at all.  The shortest
 * round-trip decimal is the one with fewest digits inside the rounding
 * interval of x, (m -+ 1/2) 2^-s (the lower half narrower at a power of
 * two), ends included when m is even (round-half-even reading), which is
 * Steele & White's criterion ("How to Print Floating-Point Numbers
 * Accurately", PLDI 1990); the interval's ends are exact 128-bit fractions
 * too.  Outside that range (and for 0, infinities, NaN) snprintf does it.
 * Existence of a p-digit decimal in the interval is monotone in p, so the
 * search walks from 15 digits down or up.  Zeros are written directly; other
 * values outside the range (rare in simulation output) go through printf
 * and strtod, about ten times slower. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tstep/numfmt.h"

__extension__ typedef unsigned __int128 u128;

static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

/* 5^k, k <= 31: 10^k / 2^s = 5^k / 2^(s - k) keeps the products in 128 bits */
static u128 pow5_u128(int k)
{
    u128 p = 1;
    for (; k >= 9; k -= 9)
        p *= 1953125u; /* 5^9 */
    static const unsigned small[9] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625};
    return p * small[k];
}

/* a / 2^sh as integer part (fits 64 bits here) and a flag: remainder nonzero */
static uint64_t shift_div(u128 a, int sh, int *rem)
{
    *rem = (a & (((u128)1 << sh) - 1)) != 0;
    return (uint64_t)(a >> sh);
}

/* The multiple of `unit` nearest to V = F + rem/2^sh (ties to an even
 * quotient), and the other neighbour in *other. */
static uint64_t round_to(uint64_t F, u128 A, int sh, uint64_t unit, uint64_t *other)
{
    uint64_t lo = F / unit * unit, hi = lo + unit, r = F - lo;
    int up;
    if (unit == 1) { /* compare the fraction with 1/2 */
        u128 frac = A & (((u128)1 << sh) - 1), half = (u128)1 << (sh - 1);
        up = frac > half || (frac == half && (F & 1));
    } else { /* unit even: 2 r + 2 frac against unit */
        u128 frac = A & (((u128)1 << sh) - 1);
        if (2 * r < unit)
            up = 0;
        else if (2 * r > unit || frac)
            up = 1;
        else
            up = (lo / unit) & 1; /* exact tie */
    }
    *other = up ? lo : hi;
    return up ? hi : lo;
}

/* print sign, digits of D (stripped of trailing zeros) with decimal exponent
 * E of the leading digit, in %g layout for precision P */
static size_t layout(char *buf, int neg, uint64_t D, int k, int P)
{
    char dig[24];
    int n = 0;
    for (uint64_t t = D; t; t /= 10)
        dig[n++] = (char)('0' + t % 10);
    int E = n - 1 - k; /* dig holds the digits backwards */
    int first = 0;
    while (first < n - 1 && dig[first] == '0')
        first++;
    /* digits, most significant first: dig[n-1] .. dig[first] */
    int nd = n - first;
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (E < -4 || E >= P) {
        *p++ = dig[n - 1];
        if (nd > 1) {
            *p++ = '.';
            for (int i = n - 2; i >= first; i--)
                *p++ = dig[i];
        }
        *p++ = 'e';
        *p++ = E < 0 ? '-' : '+';
        int ae = E < 0 ? -E : E;
        if (ae >= 100)
            *p++ = (char)('0' + ae / 100);
        *p++ = (char)('0' + ae / 10 % 10);
        *p++ = (char)('0' + ae % 10);
    } else if (E >= 0) {
        for (int i = 0; i <= E; i++)
            *p++ = i < nd ? dig[n - 1 - i] : '0';
        if (nd > E + 1) {
            *p++ = '.';
            for (int i = E + 1; i < nd; i++)
                *p++ = dig[n - 1 - i];
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -E - 1; i++)
            *p++ = '0';
        for (int i = 0; i < nd; i++)
            *p++ = dig[n - 1 - i];
    }
    *p = '\0';
    return (size_t)(p - buf);
}

/* Outside the fast range: printf at fixed digits; for the shortest, the
 * fewest %.*e digits that read back, laid out as %.17g would. */
static size_t slow_format(char *buf, double x, int digits)
{
    if (x == 0.0 && digits >= 0) { /* as %g writes zeros */
        char *p = buf;
        if (signbit(x))
            *p++ = '-';
        *p++ = '0', *p = '\0';
        return (size_t)(p - buf);
    }
    if (digits > 0 || !isfinite(x))
        return (size_t)snprintf(buf, TS_NUM_MAX, "%.*g", digits > 0 ? digits : 17, x);
    /* the fewest %.*e digits that read back: monotone in the digits, so walk
     * from 16 down while they read back, or up to 17 */
    char e[2][40];
    int p = 16, best = -1;
    for (;;) {
        snprintf(e[p & 1], sizeof e[0], "%.*e", p - 1, x);
        if (strtod(e[p & 1], NULL) == x) {
            best = p;
            if (p == 1)
                break;
            p--;
        } else if (best > 0 || p == 17) {
            break;
        } else {
            p++;
        }
    }
    if (best < 0)
        best = 17, snprintf(e[1], sizeof e[0], "%.16e", x);
    uint64_t D = 0;
    const char *c = e[best & 1] + (x < 0);
    for (; *c != 'e'; c++)
        if (*c != '.')
            D = 10 * D + (uint64_t)(*c - '0');
    int E = atoi(c + 1);
    return layout(buf, x < 0, D, best - 1 - E, 17);
}

size_t ts_format_double(char *buf, double x, int digits)
{
    double ax = fabs(x);
    if (!(ax >= 1e-15 && ax < 1e15) || digits < 0 || digits > 17)
        return slow_format(buf, x, digits);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int neg = (int)(bits >> 63), be = (int)((bits >> 52) & 0x7ff);
    uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
    int sh = 1075 - be; /* x = m 2^-sh, 1 <= sh <= 102 in this range */
    /* floor(log10 x) is floor(e2 log10 2) or one more (fixed below) */
    int e2 = be - 1023, e10 = (e2 * 78913) >> 18, k = 16 - e10, rem;
    u128 A = 0;
    uint64_t F = 0;
    int s2 = 0; /* V = x 10^k = A / 2^s2, A = m 5^k, s2 = sh - k */
    for (int tries = 0; tries < 3; tries++) { /* log10 may be one off */
        s2 = sh - k;
        if (k < 0 || k > 31 || s2 < 1 || s2 > 120)
            return slow_format(buf, x, digits);
        A = (u128)m * pow5_u128(k);
        F = shift_div(A, s2, &rem);
        if (F < pow10_u64[16])
            k++;
        else if (F >= pow10_u64[17])
            k--;
        else
            break;
    }
    s2 = sh - k;
    if (F < pow10_u64[16] || F >= pow10_u64[17] || k < 0 || k > 31 || s2 < 1 || s2 > 120)
        return slow_format(buf, x, digits);
    uint64_t other;
    if (digits > 0) {
        uint64_t D = round_to(F, A, s2, pow10_u64[17 - digits], &other);
        return layout(buf, neg, D, k, digits);
    }
    /* the rounding interval of x, scaled: (lo, hi) */
    u128 p5 = pow5_u128(k);
    int hr, lr, incl = !(m & 1);
    uint64_t Hq = shift_div((u128)(2 * m + 1) * p5, s2 + 1, &hr), Lq;
    if (m == (1ull << 52) && be > 1)
        Lq = shift_div((u128)(4 * m - 1) * p5, s2 + 2, &lr);
    else
        Lq = shift_div((u128)(2 * m - 1) * p5, s2 + 1, &lr);
#define INSIDE(D)                                                                          \
    (((D) < Hq || ((D) == Hq && (hr || incl))) && ((D) > Lq || ((D) == Lq && !lr && incl)))
    uint64_t best = 0;
    int found = 0;
    int p = 15, step = 0;
    for (;;) {
        uint64_t unit = pow10_u64[17 - p], D = round_to(F, A, s2, unit, &other), pick = 0;
        int ok = 1;
        if (INSIDE(D))
            pick = D;
        else if (INSIDE(other))
            pick = other;
        else
            ok = 0;
        if (ok) {
            best = pick, found = 1;
            if (step > 0 || p == 1)
                break; /* walked up to the first success, or at one digit */
            step = -1, p--;
        } else {
            if (step < 0 || p == 17)
                break; /* walked down past the last success */
            step = 1, p++;
        }
    }
#undef INSIDE
    if (!found)
        return slow_format(buf, x, 0);
    return layout(buf, neg, best, k, 17);
}
