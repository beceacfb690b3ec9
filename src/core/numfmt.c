/* Fast decimal formatting of doubles for the trajectory and frame writers
 * (tstep/numfmt.h).
 *
 * ts_format_double(buf, x, P) writes what printf("%.*g", P, x) writes
 * (P = 1..17), and with P = 0 the shortest decimal that reads back (strtod)
 * as exactly x, laid out as %.17g would lay it out (exponent form below
 * 1e-4 or from 1e17; no trailing zeros).
 *
 * Method: x = m 2^-s with m < 2^53, so V = x 10^k = m 5^k / 2^(s - k),
 * scaled to 17 integer digits, is an exact binary fraction: its integer
 * part F and the class of its remainder (zero, below, at or above one half)
 * give correct rounding to any number of digits with no error at all.  For
 * |x| from 1e-15 (k <= 31, 5^31 < 2^72) the product fits 128 bits; below
 * that, down to the subnormals, 5^k (k <= 340) is a multi-word integer of
 * at most 13 words.  The shortest round-trip decimal is the one with fewest
 * digits inside the rounding interval of x, (m -+ 1/2) 2^-s (the lower half
 * narrower at a power of two), ends included when m is even
 * (round-half-even reading), which is Steele & White's criterion ("How to
 * Print Floating-Point Numbers Accurately", PLDI 1990); the interval's ends
 * are exact fractions of the same kind.  Existence of a p-digit decimal in
 * the interval is monotone in p, so the search walks from 15 digits down or
 * up.  Zeros are written directly; |x| from about 4.5e15 (x an integer
 * beyond 2^52, k < 0 or s <= k), infinities and NaN go through printf and
 * strtod, about ten times slower: rare in simulation output. */
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

/* 5^k, k <= 27 (5^27 < 2^63) */
static const uint64_t pow5_u64[28] = {
    1ull,
    5ull,
    25ull,
    125ull,
    625ull,
    3125ull,
    15625ull,
    78125ull,
    390625ull,
    1953125ull,
    9765625ull,
    48828125ull,
    244140625ull,
    1220703125ull,
    6103515625ull,
    30517578125ull,
    152587890625ull,
    762939453125ull,
    3814697265625ull,
    19073486328125ull,
    95367431640625ull,
    476837158203125ull,
    2384185791015625ull,
    11920928955078125ull,
    59604644775390625ull,
    298023223876953125ull,
    1490116119384765625ull,
    7450580596923828125ull
};

/* What rounding needs to know of a remainder f in [0, 1). */
enum { FRAC_ZERO, FRAC_BELOW_HALF, FRAC_HALF, FRAC_ABOVE_HALF };

/* A scaled value c 5^k / 2^s: its floor and the class of its remainder. */
typedef struct {
    uint64_t q;
    int frac;
} scaled;

/* 5^k: in 128 bits for k <= 31, else as n words at w (least significant
 * first; 5^340 < 2^790, times c < 2^56: at most 14 words).  Passed by
 * value, so that the compiler keeps it in registers. */
#define BIG_WORDS 15
typedef struct {
    int k, n;
    u128 p128;
    const uint64_t *w;
} pow5;

/* w[0..n) *= f; returns the new length */
static int words_mul(uint64_t *w, int n, uint64_t f)
{
    uint64_t carry = 0;
    for (int i = 0; i < n; i++) {
        u128 t = (u128)w[i] * f + carry;
        w[i] = (uint64_t)t;
        carry = (uint64_t)(t >> 64);
    }
    if (carry)
        w[n++] = carry;
    return n;
}

/* 5^k; for k > 31 the words are this thread's last power computed, kept
 * for the next number (a row's numbers share their magnitudes).  The
 * initial-exec model reaches them at a fixed offset from the thread
 * pointer, without __tls_get_addr, which would make the dynamic loader a
 * NEEDED of libtstep.so besides libc and libm (128 bytes of the static TLS
 * block; glibc keeps 512 for libraries loaded later). */
#define TS_TLS_IE __attribute__((tls_model("initial-exec")))
static inline pow5 pow5_of(int k)
{
    static _Thread_local uint64_t words[BIG_WORDS] TS_TLS_IE;
    static _Thread_local int words_k TS_TLS_IE = -1, words_n TS_TLS_IE;
    pow5 P = {k, 1, 0, words};
    if (k <= 27) {
        P.p128 = pow5_u64[k];
    } else if (k <= 31) {
        P.p128 = (u128)pow5_u64[27] * pow5_u64[k - 27];
    } else if (k == words_k) {
        P.n = words_n;
    } else {
        words[0] = pow5_u64[k % 27];
        for (int j = k / 27; j > 0; j--)
            P.n = words_mul(words, P.n, pow5_u64[27]);
        words_k = k, words_n = P.n;
    }
    return P;
}

static inline int frac_class(int half, int below)
{
    return half ? (below ? FRAC_ABOVE_HALF : FRAC_HALF) : (below ? FRAC_BELOW_HALF : FRAC_ZERO);
}

/* c 5^k / 2^s for s >= 1 and a quotient below 2^64, k > 31 */
__attribute__((noinline)) static scaled scale_words(const uint64_t *p, int n, uint64_t c,
                                                   int s)
{
    scaled r;
    uint64_t w[BIG_WORDS];
    int i = s / 64, b = s % 64, h = (s - 1) / 64, hb = (s - 1) % 64, below = 0;
    memcpy(w, p, (size_t)n * sizeof *w);
    n = words_mul(w, n, c);
    r.q = i < n ? w[i] >> b : 0;
    if (b && i + 1 < n)
        r.q |= w[i + 1] << (64 - b);
    for (int j = 0; j < h && !below; j++)
        below = w[j] != 0;
    below |= hb && (w[h] & ((1ull << hb) - 1)) != 0;
    r.frac = frac_class((int)(w[h] >> hb) & 1, below);
    return r;
}

/* c 5^k / 2^s for s >= 1 and a quotient below 2^64 */
static inline scaled scale(pow5 P, uint64_t c, int s)
{
    if (P.k > 31)
        return scale_words(P.w, P.n, c, s);
    /* c < 2^56, 5^31 < 2^72: the product fits */
    u128 a = (u128)c * P.p128, low = a & (((u128)1 << s) - 1), half = (u128)1 << (s - 1);
    scaled r = {(uint64_t)(a >> s), frac_class(low >= half, low != 0 && low != half)};
    return r;
}

/* F / 10^j by constants: a division by a variable costs tens of cycles */
static inline uint64_t div_pow10(uint64_t F, int j)
{
    if (j == 1) /* the shortest of most doubles has 16 or 17 digits */
        return F / 10;
    if (j == 2)
        return F / 100;
    switch (j) {
#define DIV_CASE(J, P)                                                                     \
    case J:                                                                                \
        return F / P##ull;
        DIV_CASE(1, 10)
        DIV_CASE(2, 100)
        DIV_CASE(3, 1000)
        DIV_CASE(4, 10000)
        DIV_CASE(5, 100000)
        DIV_CASE(6, 1000000)
        DIV_CASE(7, 10000000)
        DIV_CASE(8, 100000000)
        DIV_CASE(9, 1000000000)
        DIV_CASE(10, 10000000000)
        DIV_CASE(11, 100000000000)
        DIV_CASE(12, 1000000000000)
        DIV_CASE(13, 10000000000000)
        DIV_CASE(14, 100000000000000)
        DIV_CASE(15, 1000000000000000)
        DIV_CASE(16, 10000000000000000)
#undef DIV_CASE
    default:
        return F;
    }
}

/* The multiple of 10^j nearest to V (ties to an even quotient), and the
 * other neighbour in *other. */
static inline uint64_t round_to(scaled V, int j, uint64_t *other)
{
    uint64_t unit = pow10_u64[j], d = div_pow10(V.q, j), lo = d * unit, hi = lo + unit;
    uint64_t r = V.q - lo;
    int up;
    if (j == 0)
        up = V.frac == FRAC_ABOVE_HALF || (V.frac == FRAC_HALF && (V.q & 1));
    else /* unit even: 2 r + 2 f against unit */
        up = 2 * r > unit || (2 * r == unit && (V.frac != FRAC_ZERO || (d & 1)));
    *other = up ? lo : hi;
    return up ? hi : lo;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* the 8 decimal digits of v < 10^8 */
static inline void put8(char *p, uint32_t v)
{
    uint32_t a = v / 10000, b = v % 10000;
    memcpy(p, digit_pairs + 2 * (a / 100), 2);
    memcpy(p + 2, digit_pairs + 2 * (a % 100), 2);
    memcpy(p + 4, digit_pairs + 2 * (b / 100), 2);
    memcpy(p + 6, digit_pairs + 2 * (b % 100), 2);
}

/* print sign and the digits of D = V rounded (17 digits, or 10^17 after a
 * carry) without trailing zeros, x = D 10^-k, in %g layout for precision P.
 * Digits are copied 16 or 17 at a time (fixed-size copies, no call): bytes
 * past the end are scratch within buf's TS_NUM_MAX. */
static size_t layout(char *buf, int neg, uint64_t D, int k, int P)
{
    if (D >= pow10_u64[17])
        D /= 10, k--;
    char d[40] = "";
    uint32_t hi = (uint32_t)(D / 100000000u);
    d[0] = (char)('0' + hi / 100000000u);
    put8(d + 1, hi % 100000000u);
    put8(d + 9, (uint32_t)(D % 100000000u));
    int nd = 17, E = 16 - k;
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    char *p = buf;
    if (neg)
        *p++ = '-';
    if (E < -4 || E >= P) { /* p + 16 <= buf + 19 */
        *p++ = d[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, d + 1, 16), p += nd - 1;
        }
        *p++ = 'e';
        *p++ = E < 0 ? '-' : '+';
        int ae = E < 0 ? -E : E;
        if (ae >= 100)
            *p++ = (char)('0' + ae / 100);
        *p++ = (char)('0' + ae / 10 % 10);
        *p++ = (char)('0' + ae % 10);
    } else if (E >= 0) { /* E < P <= 17 */
        memcpy(p, d, 17);
        for (int i = nd; i <= E; i++)
            p[i] = '0';
        p += E + 1;
        if (nd > E + 1) {
            *p++ = '.';
            if (E <= 13) /* p + 16 <= buf + 32 */
                memcpy(p, d + E + 1, 16), p += nd - E - 1;
            else
                for (int i = E + 1; i < nd; i++)
                    *p++ = d[i];
        }
    } else { /* -4 <= E < 0: p + 17 <= buf + 23 */
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -E - 1; i++)
            *p++ = '0';
        memcpy(p, d, 17), p += nd;
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
    return layout(buf, x < 0, D * pow10_u64[17 - best], 16 - E, 17);
}

/* x = m 2^-sh scaled to 17 digits, V = x 10^k in [10^16, 10^17), with 5^k
 * in *P; 0 where out of range (the slow path) */
static inline int scale_17(uint64_t m, int sh, int e2, pow5 *P, scaled *V)
{
    int k = 16 - ((e2 * 78913) >> 18); /* floor(e2 log10 2), or one off */
    for (int tries = 0; tries < 3; tries++) {
        int s = sh - k;
        if (k < 0 || k > 345 || s < 1 || (k <= 31 && s > 120))
            return 0;
        *P = pow5_of(k);
        *V = scale(*P, m, s);
        if (V->q < pow10_u64[16])
            k++;
        else if (V->q >= pow10_u64[17])
            k--;
        else
            return 1;
    }
    return 0;
}

/* The decimal with fewest digits inside x's rounding interval (lo, hi), the
 * one nearest V where two are; m, sh, be describe x */
static inline uint64_t shortest(pow5 P, scaled V, uint64_t m, int sh, int be)
{
    int s = sh - P.k, incl = !(m & 1);
    scaled H = scale(P, 2 * m + 1, s + 1);
    scaled L = m == (1ull << 52) && be > 1 ? scale(P, 4 * m - 1, s + 2)
                                           : scale(P, 2 * m - 1, s + 1);
#define INSIDE(D)                                                                          \
    (((D) < H.q || ((D) == H.q && (H.frac != FRAC_ZERO || incl))) &&                       \
     ((D) > L.q || ((D) == L.q && L.frac == FRAC_ZERO && incl)))
    uint64_t best = 0;
    int p = 16, step = 0;
    for (;;) {
        uint64_t other, D = round_to(V, 17 - p, &other), pick = 0;
        if (INSIDE(D))
            pick = D;
        else if (INSIDE(other))
            pick = other;
        if (pick) {
            best = pick;
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
    return best;
}

size_t ts_format_double(char *buf, double x, int digits)
{
    if (x == 0.0 || !isfinite(x) || digits < 0 || digits > 17)
        return slow_format(buf, x, digits);
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int neg = (int)(bits >> 63), be = (int)((bits >> 52) & 0x7ff), sh, e2;
    uint64_t m = bits & ((1ull << 52) - 1);
    if (be == 0) /* subnormal: x = m 2^-1074 */
        sh = 1074, e2 = 63 - __builtin_clzll(m) - 1074;
    else
        m |= 1ull << 52, sh = 1075 - be, e2 = be - 1023;
    pow5 P;
    scaled V;
    if (!scale_17(m, sh, e2, &P, &V))
        return slow_format(buf, x, digits);
    if (digits > 0) {
        uint64_t other;
        return layout(buf, neg, round_to(V, 17 - digits, &other), P.k, digits);
    }
    uint64_t best = shortest(P, V, m, sh, be);
    if (!best)
        return slow_format(buf, x, 0);
    return layout(buf, neg, best, P.k, 17);
}
