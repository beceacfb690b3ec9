/* Fast decimal formatting of doubles for the trajectory and frame writers
 * (tstep/numfmt.h).
 *
 * ts_format_double(buf, x, P) writes what printf("%.*g", P, x) writes
 * (P = 1..17), and with P = 0 the shortest decimal that reads back (strtod)
 * as exactly x, laid out as %.17g would lay it out (exponent form below
 * 1e-4 or from 1e17; no trailing zeros).
 *
 * The shortest (P = 0) is Schubfach's (R. Giulietti, "The Schubfach way to
 * render doubles", 2020; the same family as U. Adams, "Ryu: fast
 * float-to-string conversion", PLDI 2018).  x = c 2^q; its rounding
 * interval (c -+ 1/2) 2^q (the lower half narrower at a power of two; ends
 * included when c is even, as strtod rounds half to even), scaled by 10^-k
 * with k = floor(log10 of its width), is 1 to 10 wide: the shortest decimal
 * inside is the multiple of 10 inside if there is one, else s = floor(x
 * 10^-k) or s + 1, the nearer where both are (Steele & White's criterion,
 * PLDI 1990).  The three scaled values (x and the ends, times 4 to make
 * them integers) come from one table of 617 128-bit approximations g of
 * 10^-k from above (10 KB) and two 64x64-bit products each.  The estimate
 * exceeds the exact value by less than 2^-69, so where its fraction
 * exceeds that its floor is exact and the value not an integer (its
 * floor's low bit is then set: rounded to odd, comparisons with multiples
 * of 4 are exact); elsewhere the value is tested for being an integer
 * exactly (x = 1, 0.5, integers), and should it be within 2^-69 of one
 * without being one (Giulietti proves it never is) the exact path below
 * answers.  The digits are written two per table look-up, 8 to a word,
 * through a small buffer copied out in pieces of fixed size; zeros are
 * written directly.
 *
 * The exact path (fixed digits; the tests' oracle for the shortest,
 * src/core/numfmt.h): x = m 2^-s with m < 2^53, so V = x 10^k =
 * m 5^k / 2^(s - k), scaled to 17 integer digits, is an exact binary
 * fraction: its integer part F and the class of its remainder (zero,
 * below, at or above one half) give correct rounding to any number of
 * digits with no error at all.  For |x| from 1e-15 (k <= 31, 5^31 < 2^72)
 * the product fits 128 bits; below that, down to the subnormals, 5^k
 * (k <= 340) is a multi-word integer of at most 13 words.  Zeros are
 * written directly; |x| from about 4.5e15 (x an integer beyond 2^52, k <
 * 0 or s <= k), infinities and NaN go through printf (and, for the
 * shortest, strtod: the fewest %.*e digits that read back).  Powers of two
 * from 2^52 keep those printf digits at P = 0 too, so that the output is
 * the same whichever path: at 27 of them (2^89, 2^122, ...) the nearest
 * 16-digit decimal is outside the narrower half below while another is
 * inside, and printf's answer has 17 digits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/numfmt.h"
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

size_t ts_format_double_exact(char *buf, double x, int digits)
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

/* --- the shortest decimal: Schubfach ------------------------------------- */

/* g(e) = floor(10^e 2^-t) + 1 with t such that 10^e 2^-t lies in
 * [2^127, 2^128), t = floor(e log2 10) - 127, for e = POW10_MIN..324
 * (10^-k for every k the doubles need); {high word, low word}. */
#define POW10_MIN (-292)
static const uint64_t pow10_g[617][2] = {
    {0xff77b1fcbebcdc4full, 0x25e8e89c13bb0f7bull}, {0x9faacf3df73609b1ull, 0x77b191618c54e9adull},
    {0xc795830d75038c1dull, 0xd59df5b9ef6a2418ull}, {0xf97ae3d0d2446f25ull, 0x4b0573286b44ad1eull},
    {0x9becce62836ac577ull, 0x4ee367f9430aec33ull}, {0xc2e801fb244576d5ull, 0x229c41f793cda740ull},
    {0xf3a20279ed56d48aull, 0x6b43527578c11110ull}, {0x9845418c345644d6ull, 0x830a13896b78aaaaull},
    {0xbe5691ef416bd60cull, 0x23cc986bc656d554ull}, {0xedec366b11c6cb8full, 0x2cbfbe86b7ec8aa9ull},
    {0x94b3a202eb1c3f39ull, 0x7bf7d71432f3d6aaull}, {0xb9e08a83a5e34f07ull, 0xdaf5ccd93fb0cc54ull},
    {0xe858ad248f5c22c9ull, 0xd1b3400f8f9cff69ull}, {0x91376c36d99995beull, 0x23100809b9c21fa2ull},
    {0xb58547448ffffb2dull, 0xabd40a0c2832a78bull}, {0xe2e69915b3fff9f9ull, 0x16c90c8f323f516dull},
    {0x8dd01fad907ffc3bull, 0xae3da7d97f6792e4ull}, {0xb1442798f49ffb4aull, 0x99cd11cfdf41779dull},
    {0xdd95317f31c7fa1dull, 0x40405643d711d584ull}, {0x8a7d3eef7f1cfc52ull, 0x482835ea666b2573ull},
    {0xad1c8eab5ee43b66ull, 0xda3243650005eed0ull}, {0xd863b256369d4a40ull, 0x90bed43e40076a83ull},
    {0x873e4f75e2224e68ull, 0x5a7744a6e804a292ull}, {0xa90de3535aaae202ull, 0x711515d0a205cb37ull},
    {0xd3515c2831559a83ull, 0x0d5a5b44ca873e04ull}, {0x8412d9991ed58091ull, 0xe858790afe9486c3ull},
    {0xa5178fff668ae0b6ull, 0x626e974dbe39a873ull}, {0xce5d73ff402d98e3ull, 0xfb0a3d212dc81290ull},
    {0x80fa687f881c7f8eull, 0x7ce66634bc9d0b9aull}, {0xa139029f6a239f72ull, 0x1c1fffc1ebc44e81ull},
    {0xc987434744ac874eull, 0xa327ffb266b56221ull}, {0xfbe9141915d7a922ull, 0x4bf1ff9f0062baa9ull},
    {0x9d71ac8fada6c9b5ull, 0x6f773fc3603db4aaull}, {0xc4ce17b399107c22ull, 0xcb550fb4384d21d4ull},
    {0xf6019da07f549b2bull, 0x7e2a53a146606a49ull}, {0x99c102844f94e0fbull, 0x2eda7444cbfc426eull},
    {0xc0314325637a1939ull, 0xfa911155fefb5309ull}, {0xf03d93eebc589f88ull, 0x793555ab7eba27cbull},
    {0x96267c7535b763b5ull, 0x4bc1558b2f3458dfull}, {0xbbb01b9283253ca2ull, 0x9eb1aaedfb016f17ull},
    {0xea9c227723ee8bcbull, 0x465e15a979c1caddull}, {0x92a1958a7675175full, 0x0bfacd89ec191ecaull},
    {0xb749faed14125d36ull, 0xcef980ec671f667cull}, {0xe51c79a85916f484ull, 0x82b7e12780e7401bull},
    {0x8f31cc0937ae58d2ull, 0xd1b2ecb8b0908811ull}, {0xb2fe3f0b8599ef07ull, 0x861fa7e6dcb4aa16ull},
    {0xdfbdcece67006ac9ull, 0x67a791e093e1d49bull}, {0x8bd6a141006042bdull, 0xe0c8bb2c5c6d24e1ull},
    {0xaecc49914078536dull, 0x58fae9f773886e19ull}, {0xda7f5bf590966848ull, 0xaf39a475506a899full},
    {0x888f99797a5e012dull, 0x6d8406c952429604ull}, {0xaab37fd7d8f58178ull, 0xc8e5087ba6d33b84ull},
    {0xd5605fcdcf32e1d6ull, 0xfb1e4a9a90880a65ull}, {0x855c3be0a17fcd26ull, 0x5cf2eea09a550680ull},
    {0xa6b34ad8c9dfc06full, 0xf42faa48c0ea481full}, {0xd0601d8efc57b08bull, 0xf13b94daf124da27ull},
    {0x823c12795db6ce57ull, 0x76c53d08d6b70859ull}, {0xa2cb1717b52481edull, 0x54768c4b0c64ca6full},
    {0xcb7ddcdda26da268ull, 0xa9942f5dcf7dfd0aull}, {0xfe5d54150b090b02ull, 0xd3f93b35435d7c4dull},
    {0x9efa548d26e5a6e1ull, 0xc47bc5014a1a6db0ull}, {0xc6b8e9b0709f109aull, 0x359ab6419ca1091cull},
    {0xf867241c8cc6d4c0ull, 0xc30163d203c94b63ull}, {0x9b407691d7fc44f8ull, 0x79e0de63425dcf1eull},
    {0xc21094364dfb5636ull, 0x985915fc12f542e5ull}, {0xf294b943e17a2bc4ull, 0x3e6f5b7b17b2939eull},
    {0x979cf3ca6cec5b5aull, 0xa705992ceecf9c43ull}, {0xbd8430bd08277231ull, 0x50c6ff782a838354ull},
    {0xece53cec4a314ebdull, 0xa4f8bf5635246429ull}, {0x940f4613ae5ed136ull, 0x871b7795e136be9aull},
    {0xb913179899f68584ull, 0x28e2557b59846e40ull}, {0xe757dd7ec07426e5ull, 0x331aeada2fe589d0ull},
    {0x9096ea6f3848984full, 0x3ff0d2c85def7622ull}, {0xb4bca50b065abe63ull, 0x0fed077a756b53aaull},
    {0xe1ebce4dc7f16dfbull, 0xd3e8495912c62895ull}, {0x8d3360f09cf6e4bdull, 0x64712dd7abbbd95dull},
    {0xb080392cc4349decull, 0xbd8d794d96aacfb4ull}, {0xdca04777f541c567ull, 0xecf0d7a0fc5583a1ull},
    {0x89e42caaf9491b60ull, 0xf41686c49db57245ull}, {0xac5d37d5b79b6239ull, 0x311c2875c522ced6ull},
    {0xd77485cb25823ac7ull, 0x7d633293366b828cull}, {0x86a8d39ef77164bcull, 0xae5dff9c02033198ull},
    {0xa8530886b54dbdebull, 0xd9f57f830283fdfdull}, {0xd267caa862a12d66ull, 0xd072df63c324fd7cull},
    {0x8380dea93da4bc60ull, 0x4247cb9e59f71e6eull}, {0xa46116538d0deb78ull, 0x52d9be85f074e609ull},
    {0xcd795be870516656ull, 0x67902e276c921f8cull}, {0x806bd9714632dff6ull, 0x00ba1cd8a3db53b7ull},
    {0xa086cfcd97bf97f3ull, 0x80e8a40eccd228a5ull}, {0xc8a883c0fdaf7df0ull, 0x6122cd128006b2ceull},
    {0xfad2a4b13d1b5d6cull, 0x796b805720085f82ull}, {0x9cc3a6eec6311a63ull, 0xcbe3303674053bb1ull},
    {0xc3f490aa77bd60fcull, 0xbedbfc4411068a9dull}, {0xf4f1b4d515acb93bull, 0xee92fb5515482d45ull},
    {0x991711052d8bf3c5ull, 0x751bdd152d4d1c4bull}, {0xbf5cd54678eef0b6ull, 0xd262d45a78a0635eull},
    {0xef340a98172aace4ull, 0x86fb897116c87c35ull}, {0x9580869f0e7aac0eull, 0xd45d35e6ae3d4da1ull},
    {0xbae0a846d2195712ull, 0x8974836059cca10aull}, {0xe998d258869facd7ull, 0x2bd1a438703fc94cull},
    {0x91ff83775423cc06ull, 0x7b6306a34627ddd0ull}, {0xb67f6455292cbf08ull, 0x1a3bc84c17b1d543ull},
    {0xe41f3d6a7377eecaull, 0x20caba5f1d9e4a94ull}, {0x8e938662882af53eull, 0x547eb47b7282ee9dull},
    {0xb23867fb2a35b28dull, 0xe99e619a4f23aa44ull}, {0xdec681f9f4c31f31ull, 0x6405fa00e2ec94d5ull},
    {0x8b3c113c38f9f37eull, 0xde83bc408dd3dd05ull}, {0xae0b158b4738705eull, 0x9624ab50b148d446ull},
    {0xd98ddaee19068c76ull, 0x3badd624dd9b0958ull}, {0x87f8a8d4cfa417c9ull, 0xe54ca5d70a80e5d7ull},
    {0xa9f6d30a038d1dbcull, 0x5e9fcf4ccd211f4dull}, {0xd47487cc8470652bull, 0x7647c32000696720ull},
    {0x84c8d4dfd2c63f3bull, 0x29ecd9f40041e074ull}, {0xa5fb0a17c777cf09ull, 0xf468107100525891ull},
    {0xcf79cc9db955c2ccull, 0x7182148d4066eeb5ull}, {0x81ac1fe293d599bfull, 0xc6f14cd848405531ull},
    {0xa21727db38cb002full, 0xb8ada00e5a506a7dull}, {0xca9cf1d206fdc03bull, 0xa6d90811f0e4851dull},
    {0xfd442e4688bd304aull, 0x908f4a166d1da664ull}, {0x9e4a9cec15763e2eull, 0x9a598e4e043287ffull},
    {0xc5dd44271ad3cdbaull, 0x40eff1e1853f29feull}, {0xf7549530e188c128ull, 0xd12bee59e68ef47dull},
    {0x9a94dd3e8cf578b9ull, 0x82bb74f8301958cfull}, {0xc13a148e3032d6e7ull, 0xe36a52363c1faf02ull},
    {0xf18899b1bc3f8ca1ull, 0xdc44e6c3cb279ac2ull}, {0x96f5600f15a7b7e5ull, 0x29ab103a5ef8c0baull},
    {0xbcb2b812db11a5deull, 0x7415d448f6b6f0e8ull}, {0xebdf661791d60f56ull, 0x111b495b3464ad22ull},
    {0x936b9fcebb25c995ull, 0xcab10dd900beec35ull}, {0xb84687c269ef3bfbull, 0x3d5d514f40eea743ull},
    {0xe65829b3046b0afaull, 0x0cb4a5a3112a5113ull}, {0x8ff71a0fe2c2e6dcull, 0x47f0e785eaba72acull},
    {0xb3f4e093db73a093ull, 0x59ed216765690f57ull}, {0xe0f218b8d25088b8ull, 0x306869c13ec3532dull},
    {0x8c974f7383725573ull, 0x1e414218c73a13fcull}, {0xafbd2350644eeacfull, 0xe5d1929ef90898fbull},
    {0xdbac6c247d62a583ull, 0xdf45f746b74abf3aull}, {0x894bc396ce5da772ull, 0x6b8bba8c328eb784ull},
    {0xab9eb47c81f5114full, 0x066ea92f3f326565ull}, {0xd686619ba27255a2ull, 0xc80a537b0efefebeull},
    {0x8613fd0145877585ull, 0xbd06742ce95f5f37ull}, {0xa798fc4196e952e7ull, 0x2c48113823b73705ull},
    {0xd17f3b51fca3a7a0ull, 0xf75a15862ca504c6ull}, {0x82ef85133de648c4ull, 0x9a984d73dbe722fcull},
    {0xa3ab66580d5fdaf5ull, 0xc13e60d0d2e0ebbbull}, {0xcc963fee10b7d1b3ull, 0x318df905079926a9ull},
    {0xffbbcfe994e5c61full, 0xfdf17746497f7053ull}, {0x9fd561f1fd0f9bd3ull, 0xfeb6ea8bedefa634ull},
    {0xc7caba6e7c5382c8ull, 0xfe64a52ee96b8fc1ull}, {0xf9bd690a1b68637bull, 0x3dfdce7aa3c673b1ull},
    {0x9c1661a651213e2dull, 0x06bea10ca65c084full}, {0xc31bfa0fe5698db8ull, 0x486e494fcff30a63ull},
    {0xf3e2f893dec3f126ull, 0x5a89dba3c3efccfbull}, {0x986ddb5c6b3a76b7ull, 0xf89629465a75e01dull},
    {0xbe89523386091465ull, 0xf6bbb397f1135824ull}, {0xee2ba6c0678b597full, 0x746aa07ded582e2dull},
    {0x94db483840b717efull, 0xa8c2a44eb4571cddull}, {0xba121a4650e4ddebull, 0x92f34d62616ce414ull},
    {0xe896a0d7e51e1566ull, 0x77b020baf9c81d18ull}, {0x915e2486ef32cd60ull, 0x0ace1474dc1d122full},
    {0xb5b5ada8aaff80b8ull, 0x0d819992132456bbull}, {0xe3231912d5bf60e6ull, 0x10e1fff697ed6c6aull},
    {0x8df5efabc5979c8full, 0xca8d3ffa1ef463c2ull}, {0xb1736b96b6fd83b3ull, 0xbd308ff8a6b17cb3ull},
    {0xddd0467c64bce4a0ull, 0xac7cb3f6d05ddbdfull}, {0x8aa22c0dbef60ee4ull, 0x6bcdf07a423aa96cull},
    {0xad4ab7112eb3929dull, 0x86c16c98d2c953c7ull}, {0xd89d64d57a607744ull, 0xe871c7bf077ba8b8ull},
    {0x87625f056c7c4a8bull, 0x11471cd764ad4973ull}, {0xa93af6c6c79b5d2dull, 0xd598e40d3dd89bd0ull},
    {0xd389b47879823479ull, 0x4aff1d108d4ec2c4ull}, {0x843610cb4bf160cbull, 0xcedf722a585139bbull},
    {0xa54394fe1eedb8feull, 0xc2974eb4ee658829ull}, {0xce947a3da6a9273eull, 0x733d226229feea33ull},
    {0x811ccc668829b887ull, 0x0806357d5a3f5260ull}, {0xa163ff802a3426a8ull, 0xca07c2dcb0cf26f8ull},
    {0xc9bcff6034c13052ull, 0xfc89b393dd02f0b6ull}, {0xfc2c3f3841f17c67ull, 0xbbac2078d443ace3ull},
    {0x9d9ba7832936edc0ull, 0xd54b944b84aa4c0eull}, {0xc5029163f384a931ull, 0x0a9e795e65d4df12ull},
    {0xf64335bcf065d37dull, 0x4d4617b5ff4a16d6ull}, {0x99ea0196163fa42eull, 0x504bced1bf8e4e46ull},
    {0xc06481fb9bcf8d39ull, 0xe45ec2862f71e1d7ull}, {0xf07da27a82c37088ull, 0x5d767327bb4e5a4dull},
    {0x964e858c91ba2655ull, 0x3a6a07f8d510f870ull}, {0xbbe226efb628afeaull, 0x890489f70a55368cull},
    {0xeadab0aba3b2dbe5ull, 0x2b45ac74ccea842full}, {0x92c8ae6b464fc96full, 0x3b0b8bc90012929eull},
    {0xb77ada0617e3bbcbull, 0x09ce6ebb40173745ull}, {0xe55990879ddcaabdull, 0xcc420a6a101d0516ull},
    {0x8f57fa54c2a9eab6ull, 0x9fa946824a12232eull}, {0xb32df8e9f3546564ull, 0x47939822dc96abfaull},
    {0xdff9772470297ebdull, 0x59787e2b93bc56f8ull}, {0x8bfbea76c619ef36ull, 0x57eb4edb3c55b65bull},
    {0xaefae51477a06b03ull, 0xede622920b6b23f2ull}, {0xdab99e59958885c4ull, 0xe95fab368e45eceeull},
    {0x88b402f7fd75539bull, 0x11dbcb0218ebb415ull}, {0xaae103b5fcd2a881ull, 0xd652bdc29f26a11aull},
    {0xd59944a37c0752a2ull, 0x4be76d3346f04960ull}, {0x857fcae62d8493a5ull, 0x6f70a4400c562ddcull},
    {0xa6dfbd9fb8e5b88eull, 0xcb4ccd500f6bb953ull}, {0xd097ad07a71f26b2ull, 0x7e2000a41346a7a8ull},
    {0x825ecc24c873782full, 0x8ed400668c0c28c9ull}, {0xa2f67f2dfa90563bull, 0x728900802f0f32fbull},
    {0xcbb41ef979346bcaull, 0x4f2b40a03ad2ffbaull}, {0xfea126b7d78186bcull, 0xe2f610c84987bfa9ull},
    {0x9f24b832e6b0f436ull, 0x0dd9ca7d2df4d7caull}, {0xc6ede63fa05d3143ull, 0x91503d1c79720dbcull},
    {0xf8a95fcf88747d94ull, 0x75a44c6397ce912bull}, {0x9b69dbe1b548ce7cull, 0xc986afbe3ee11abbull},
    {0xc24452da229b021bull, 0xfbe85badce996169ull}, {0xf2d56790ab41c2a2ull, 0xfae27299423fb9c4ull},
    {0x97c560ba6b0919a5ull, 0xdccd879fc967d41bull}, {0xbdb6b8e905cb600full, 0x5400e987bbc1c921ull},
    {0xed246723473e3813ull, 0x290123e9aab23b69ull}, {0x9436c0760c86e30bull, 0xf9a0b6720aaf6522ull},
    {0xb94470938fa89bceull, 0xf808e40e8d5b3e6aull}, {0xe7958cb87392c2c2ull, 0xb60b1d1230b20e05ull},
    {0x90bd77f3483bb9b9ull, 0xb1c6f22b5e6f48c3ull}, {0xb4ecd5f01a4aa828ull, 0x1e38aeb6360b1af4ull},
    {0xe2280b6c20dd5232ull, 0x25c6da63c38de1b1ull}, {0x8d590723948a535full, 0x579c487e5a38ad0full},
    {0xb0af48ec79ace837ull, 0x2d835a9df0c6d852ull}, {0xdcdb1b2798182244ull, 0xf8e431456cf88e66ull},
    {0x8a08f0f8bf0f156bull, 0x1b8e9ecb641b5900ull}, {0xac8b2d36eed2dac5ull, 0xe272467e3d222f40ull},
    {0xd7adf884aa879177ull, 0x5b0ed81dcc6abb10ull}, {0x86ccbb52ea94baeaull, 0x98e947129fc2b4eaull},
    {0xa87fea27a539e9a5ull, 0x3f2398d747b36225ull}, {0xd29fe4b18e88640eull, 0x8eec7f0d19a03aaeull},
    {0x83a3eeeef9153e89ull, 0x1953cf68300424adull}, {0xa48ceaaab75a8e2bull, 0x5fa8c3423c052dd8ull},
    {0xcdb02555653131b6ull, 0x3792f412cb06794eull}, {0x808e17555f3ebf11ull, 0xe2bbd88bbee40bd1ull},
    {0xa0b19d2ab70e6ed6ull, 0x5b6aceaeae9d0ec5ull}, {0xc8de047564d20a8bull, 0xf245825a5a445276ull},
    {0xfb158592be068d2eull, 0xeed6e2f0f0d56713ull}, {0x9ced737bb6c4183dull, 0x55464dd69685606cull},
    {0xc428d05aa4751e4cull, 0xaa97e14c3c26b887ull}, {0xf53304714d9265dfull, 0xd53dd99f4b3066a9ull},
    {0x993fe2c6d07b7fabull, 0xe546a8038efe402aull}, {0xbf8fdb78849a5f96ull, 0xde98520472bdd034ull},
    {0xef73d256a5c0f77cull, 0x963e66858f6d4441ull}, {0x95a8637627989aadull, 0xdde7001379a44aa9ull},
    {0xbb127c53b17ec159ull, 0x5560c018580d5d53ull}, {0xe9d71b689dde71afull, 0xaab8f01e6e10b4a7ull},
    {0x9226712162ab070dull, 0xcab3961304ca70e9ull}, {0xb6b00d69bb55c8d1ull, 0x3d607b97c5fd0d23ull},
    {0xe45c10c42a2b3b05ull, 0x8cb89a7db77c506bull}, {0x8eb98a7a9a5b04e3ull, 0x77f3608e92adb243ull},
    {0xb267ed1940f1c61cull, 0x55f038b237591ed4ull}, {0xdf01e85f912e37a3ull, 0x6b6c46dec52f6689ull},
    {0x8b61313bbabce2c6ull, 0x2323ac4b3b3da016ull}, {0xae397d8aa96c1b77ull, 0xabec975e0a0d081bull},
    {0xd9c7dced53c72255ull, 0x96e7bd358c904a22ull}, {0x881cea14545c7575ull, 0x7e50d64177da2e55ull},
    {0xaa242499697392d2ull, 0xdde50bd1d5d0b9eaull}, {0xd4ad2dbfc3d07787ull, 0x955e4ec64b44e865ull},
    {0x84ec3c97da624ab4ull, 0xbd5af13bef0b113full}, {0xa6274bbdd0fadd61ull, 0xecb1ad8aeacdd58full},
    {0xcfb11ead453994baull, 0x67de18eda5814af3ull}, {0x81ceb32c4b43fcf4ull, 0x80eacf948770ced8ull},
    {0xa2425ff75e14fc31ull, 0xa1258379a94d028eull}, {0xcad2f7f5359a3b3eull, 0x096ee45813a04331ull},
    {0xfd87b5f28300ca0dull, 0x8bca9d6e188853fdull}, {0x9e74d1b791e07e48ull, 0x775ea264cf55347eull},
    {0xc612062576589ddaull, 0x95364afe032a819eull}, {0xf79687aed3eec551ull, 0x3a83ddbd83f52205ull},
    {0x9abe14cd44753b52ull, 0xc4926a9672793543ull}, {0xc16d9a0095928a27ull, 0x75b7053c0f178294ull},
    {0xf1c90080baf72cb1ull, 0x5324c68b12dd6339ull}, {0x971da05074da7beeull, 0xd3f6fc16ebca5e04ull},
    {0xbce5086492111aeaull, 0x88f4bb1ca6bcf585ull}, {0xec1e4a7db69561a5ull, 0x2b31e9e3d06c32e6ull},
    {0x9392ee8e921d5d07ull, 0x3aff322e62439fd0ull}, {0xb877aa3236a4b449ull, 0x09befeb9fad487c3ull},
    {0xe69594bec44de15bull, 0x4c2ebe687989a9b4ull}, {0x901d7cf73ab0acd9ull, 0x0f9d37014bf60a11ull},
    {0xb424dc35095cd80full, 0x538484c19ef38c95ull}, {0xe12e13424bb40e13ull, 0x2865a5f206b06fbaull},
    {0x8cbccc096f5088cbull, 0xf93f87b7442e45d4ull}, {0xafebff0bcb24aafeull, 0xf78f69a51539d749ull},
    {0xdbe6fecebdedd5beull, 0xb573440e5a884d1cull}, {0x89705f4136b4a597ull, 0x31680a88f8953031ull},
    {0xabcc77118461cefcull, 0xfdc20d2b36ba7c3eull}, {0xd6bf94d5e57a42bcull, 0x3d32907604691b4dull},
    {0x8637bd05af6c69b5ull, 0xa63f9a49c2c1b110ull}, {0xa7c5ac471b478423ull, 0x0fcf80dc33721d54ull},
    {0xd1b71758e219652bull, 0xd3c36113404ea4a9ull}, {0x83126e978d4fdf3bull, 0x645a1cac083126eaull},
    {0xa3d70a3d70a3d70aull, 0x3d70a3d70a3d70a4ull}, {0xccccccccccccccccull, 0xcccccccccccccccdull},
    {0x8000000000000000ull, 0x0000000000000001ull}, {0xa000000000000000ull, 0x0000000000000001ull},
    {0xc800000000000000ull, 0x0000000000000001ull}, {0xfa00000000000000ull, 0x0000000000000001ull},
    {0x9c40000000000000ull, 0x0000000000000001ull}, {0xc350000000000000ull, 0x0000000000000001ull},
    {0xf424000000000000ull, 0x0000000000000001ull}, {0x9896800000000000ull, 0x0000000000000001ull},
    {0xbebc200000000000ull, 0x0000000000000001ull}, {0xee6b280000000000ull, 0x0000000000000001ull},
    {0x9502f90000000000ull, 0x0000000000000001ull}, {0xba43b74000000000ull, 0x0000000000000001ull},
    {0xe8d4a51000000000ull, 0x0000000000000001ull}, {0x9184e72a00000000ull, 0x0000000000000001ull},
    {0xb5e620f480000000ull, 0x0000000000000001ull}, {0xe35fa931a0000000ull, 0x0000000000000001ull},
    {0x8e1bc9bf04000000ull, 0x0000000000000001ull}, {0xb1a2bc2ec5000000ull, 0x0000000000000001ull},
    {0xde0b6b3a76400000ull, 0x0000000000000001ull}, {0x8ac7230489e80000ull, 0x0000000000000001ull},
    {0xad78ebc5ac620000ull, 0x0000000000000001ull}, {0xd8d726b7177a8000ull, 0x0000000000000001ull},
    {0x878678326eac9000ull, 0x0000000000000001ull}, {0xa968163f0a57b400ull, 0x0000000000000001ull},
    {0xd3c21bcecceda100ull, 0x0000000000000001ull}, {0x84595161401484a0ull, 0x0000000000000001ull},
    {0xa56fa5b99019a5c8ull, 0x0000000000000001ull}, {0xcecb8f27f4200f3aull, 0x0000000000000001ull},
    {0x813f3978f8940984ull, 0x4000000000000001ull}, {0xa18f07d736b90be5ull, 0x5000000000000001ull},
    {0xc9f2c9cd04674edeull, 0xa400000000000001ull}, {0xfc6f7c4045812296ull, 0x4d00000000000001ull},
    {0x9dc5ada82b70b59dull, 0xf020000000000001ull}, {0xc5371912364ce305ull, 0x6c28000000000001ull},
    {0xf684df56c3e01bc6ull, 0xc732000000000001ull}, {0x9a130b963a6c115cull, 0x3c7f400000000001ull},
    {0xc097ce7bc90715b3ull, 0x4b9f100000000001ull}, {0xf0bdc21abb48db20ull, 0x1e86d40000000001ull},
    {0x96769950b50d88f4ull, 0x1314448000000001ull}, {0xbc143fa4e250eb31ull, 0x17d955a000000001ull},
    {0xeb194f8e1ae525fdull, 0x5dcfab0800000001ull}, {0x92efd1b8d0cf37beull, 0x5aa1cae500000001ull},
    {0xb7abc627050305adull, 0xf14a3d9e40000001ull}, {0xe596b7b0c643c719ull, 0x6d9ccd05d0000001ull},
    {0x8f7e32ce7bea5c6full, 0xe4820023a2000001ull}, {0xb35dbf821ae4f38bull, 0xdda2802c8a800001ull},
    {0xe0352f62a19e306eull, 0xd50b2037ad200001ull}, {0x8c213d9da502de45ull, 0x4526f422cc340001ull},
    {0xaf298d050e4395d6ull, 0x9670b12b7f410001ull}, {0xdaf3f04651d47b4cull, 0x3c0cdd765f114001ull},
    {0x88d8762bf324cd0full, 0xa5880a69fb6ac801ull}, {0xab0e93b6efee0053ull, 0x8eea0d047a457a01ull},
    {0xd5d238a4abe98068ull, 0x72a4904598d6d881ull}, {0x85a36366eb71f041ull, 0x47a6da2b7f864751ull},
    {0xa70c3c40a64e6c51ull, 0x999090b65f67d925ull}, {0xd0cf4b50cfe20765ull, 0xfff4b4e3f741cf6eull},
    {0x82818f1281ed449full, 0xbff8f10e7a8921a5ull}, {0xa321f2d7226895c7ull, 0xaff72d52192b6a0eull},
    {0xcbea6f8ceb02bb39ull, 0x9bf4f8a69f764491ull}, {0xfee50b7025c36a08ull, 0x02f236d04753d5b5ull},
    {0x9f4f2726179a2245ull, 0x01d762422c946591ull}, {0xc722f0ef9d80aad6ull, 0x424d3ad2b7b97ef6ull},
    {0xf8ebad2b84e0d58bull, 0xd2e0898765a7deb3ull}, {0x9b934c3b330c8577ull, 0x63cc55f49f88eb30ull},
    {0xc2781f49ffcfa6d5ull, 0x3cbf6b71c76b25fcull}, {0xf316271c7fc3908aull, 0x8bef464e3945ef7bull},
    {0x97edd871cfda3a56ull, 0x97758bf0e3cbb5adull}, {0xbde94e8e43d0c8ecull, 0x3d52eeed1cbea318ull},
    {0xed63a231d4c4fb27ull, 0x4ca7aaa863ee4bdeull}, {0x945e455f24fb1cf8ull, 0x8fe8caa93e74ef6bull},
    {0xb975d6b6ee39e436ull, 0xb3e2fd538e122b45ull}, {0xe7d34c64a9c85d44ull, 0x60dbbca87196b617ull},
    {0x90e40fbeea1d3a4aull, 0xbc8955e946fe31ceull}, {0xb51d13aea4a488ddull, 0x6babab6398bdbe42ull},
    {0xe264589a4dcdab14ull, 0xc696963c7eed2dd2ull}, {0x8d7eb76070a08aecull, 0xfc1e1de5cf543ca3ull},
    {0xb0de65388cc8ada8ull, 0x3b25a55f43294bccull}, {0xdd15fe86affad912ull, 0x49ef0eb713f39ebfull},
    {0x8a2dbf142dfcc7abull, 0x6e3569326c784338ull}, {0xacb92ed9397bf996ull, 0x49c2c37f07965405ull},
    {0xd7e77a8f87daf7fbull, 0xdc33745ec97be907ull}, {0x86f0ac99b4e8dafdull, 0x69a028bb3ded71a4ull},
    {0xa8acd7c0222311bcull, 0xc40832ea0d68ce0dull}, {0xd2d80db02aabd62bull, 0xf50a3fa490c30191ull},
    {0x83c7088e1aab65dbull, 0x792667c6da79e0fbull}, {0xa4b8cab1a1563f52ull, 0x577001b891185939ull},
    {0xcde6fd5e09abcf26ull, 0xed4c0226b55e6f87ull}, {0x80b05e5ac60b6178ull, 0x544f8158315b05b5ull},
    {0xa0dc75f1778e39d6ull, 0x696361ae3db1c722ull}, {0xc913936dd571c84cull, 0x03bc3a19cd1e38eaull},
    {0xfb5878494ace3a5full, 0x04ab48a04065c724ull}, {0x9d174b2dcec0e47bull, 0x62eb0d64283f9c77ull},
    {0xc45d1df942711d9aull, 0x3ba5d0bd324f8395ull}, {0xf5746577930d6500ull, 0xca8f44ec7ee3647aull},
    {0x9968bf6abbe85f20ull, 0x7e998b13cf4e1eccull}, {0xbfc2ef456ae276e8ull, 0x9e3fedd8c321a67full},
    {0xefb3ab16c59b14a2ull, 0xc5cfe94ef3ea101full}, {0x95d04aee3b80ece5ull, 0xbba1f1d158724a13ull},
    {0xbb445da9ca61281full, 0x2a8a6e45ae8edc98ull}, {0xea1575143cf97226ull, 0xf52d09d71a3293beull},
    {0x924d692ca61be758ull, 0x593c2626705f9c57ull}, {0xb6e0c377cfa2e12eull, 0x6f8b2fb00c77836dull},
    {0xe498f455c38b997aull, 0x0b6dfb9c0f956448ull}, {0x8edf98b59a373fecull, 0x4724bd4189bd5eadull},
    {0xb2977ee300c50fe7ull, 0x58edec91ec2cb658ull}, {0xdf3d5e9bc0f653e1ull, 0x2f2967b66737e3eeull},
    {0x8b865b215899f46cull, 0xbd79e0d20082ee75ull}, {0xae67f1e9aec07187ull, 0xecd8590680a3aa12ull},
    {0xda01ee641a708de9ull, 0xe80e6f4820cc9496ull}, {0x884134fe908658b2ull, 0x3109058d147fdcdeull},
    {0xaa51823e34a7eedeull, 0xbd4b46f0599fd416ull}, {0xd4e5e2cdc1d1ea96ull, 0x6c9e18ac7007c91bull},
    {0x850fadc09923329eull, 0x03e2cf6bc604ddb1ull}, {0xa6539930bf6bff45ull, 0x84db8346b786151dull},
    {0xcfe87f7cef46ff16ull, 0xe612641865679a64ull}, {0x81f14fae158c5f6eull, 0x4fcb7e8f3f60c07full},
    {0xa26da3999aef7749ull, 0xe3be5e330f38f09eull}, {0xcb090c8001ab551cull, 0x5cadf5bfd3072cc6ull},
    {0xfdcb4fa002162a63ull, 0x73d9732fc7c8f7f7ull}, {0x9e9f11c4014dda7eull, 0x2867e7fddcdd9afbull},
    {0xc646d63501a1511dull, 0xb281e1fd541501b9ull}, {0xf7d88bc24209a565ull, 0x1f225a7ca91a4227ull},
    {0x9ae757596946075full, 0x3375788de9b06959ull}, {0xc1a12d2fc3978937ull, 0x0052d6b1641c83afull},
    {0xf209787bb47d6b84ull, 0xc0678c5dbd23a49bull}, {0x9745eb4d50ce6332ull, 0xf840b7ba963646e1ull},
    {0xbd176620a501fbffull, 0xb650e5a93bc3d899ull}, {0xec5d3fa8ce427affull, 0xa3e51f138ab4cebfull},
    {0x93ba47c980e98cdfull, 0xc66f336c36b10138ull}, {0xb8a8d9bbe123f017ull, 0xb80b0047445d4185ull},
    {0xe6d3102ad96cec1dull, 0xa60dc059157491e6ull}, {0x9043ea1ac7e41392ull, 0x87c89837ad68db30ull},
    {0xb454e4a179dd1877ull, 0x29babe4598c311fcull}, {0xe16a1dc9d8545e94ull, 0xf4296dd6fef3d67bull},
    {0x8ce2529e2734bb1dull, 0x1899e4a65f58660dull}, {0xb01ae745b101e9e4ull, 0x5ec05dcff72e7f90ull},
    {0xdc21a1171d42645dull, 0x76707543f4fa1f74ull}, {0x899504ae72497ebaull, 0x6a06494a791c53a9ull},
    {0xabfa45da0edbde69ull, 0x0487db9d17636893ull}, {0xd6f8d7509292d603ull, 0x45a9d2845d3c42b7ull},
    {0x865b86925b9bc5c2ull, 0x0b8a2392ba45a9b3ull}, {0xa7f26836f282b732ull, 0x8e6cac7768d7141full},
    {0xd1ef0244af2364ffull, 0x3207d795430cd927ull}, {0x8335616aed761f1full, 0x7f44e6bd49e807b9ull},
    {0xa402b9c5a8d3a6e7ull, 0x5f16206c9c6209a7ull}, {0xcd036837130890a1ull, 0x36dba887c37a8c10ull},
    {0x802221226be55a64ull, 0xc2494954da2c978aull}, {0xa02aa96b06deb0fdull, 0xf2db9baa10b7bd6dull},
    {0xc83553c5c8965d3dull, 0x6f92829494e5acc8ull}, {0xfa42a8b73abbf48cull, 0xcb772339ba1f17faull},
    {0x9c69a97284b578d7ull, 0xff2a760414536efcull}, {0xc38413cf25e2d70dull, 0xfef5138519684abbull},
    {0xf46518c2ef5b8cd1ull, 0x7eb258665fc25d6aull}, {0x98bf2f79d5993802ull, 0xef2f773ffbd97a62ull},
    {0xbeeefb584aff8603ull, 0xaafb550ffacfd8fbull}, {0xeeaaba2e5dbf6784ull, 0x95ba2a53f983cf39ull},
    {0x952ab45cfa97a0b2ull, 0xdd945a747bf26184ull}, {0xba756174393d88dfull, 0x94f971119aeef9e5ull},
    {0xe912b9d1478ceb17ull, 0x7a37cd5601aab85eull}, {0x91abb422ccb812eeull, 0xac62e055c10ab33bull},
    {0xb616a12b7fe617aaull, 0x577b986b314d600aull}, {0xe39c49765fdf9d94ull, 0xed5a7e85fda0b80cull},
    {0x8e41ade9fbebc27dull, 0x14588f13be847308ull}, {0xb1d219647ae6b31cull, 0x596eb2d8ae258fc9ull},
    {0xde469fbd99a05fe3ull, 0x6fca5f8ed9aef3bcull}, {0x8aec23d680043beeull, 0x25de7bb9480d5855ull},
    {0xada72ccc20054ae9ull, 0xaf561aa79a10ae6bull}, {0xd910f7ff28069da4ull, 0x1b2ba1518094da05ull},
    {0x87aa9aff79042286ull, 0x90fb44d2f05d0843ull}, {0xa99541bf57452b28ull, 0x353a1607ac744a54ull},
    {0xd3fa922f2d1675f2ull, 0x42889b8997915ce9ull}, {0x847c9b5d7c2e09b7ull, 0x69956135febada12ull},
    {0xa59bc234db398c25ull, 0x43fab9837e699096ull}, {0xcf02b2c21207ef2eull, 0x94f967e45e03f4bcull},
    {0x8161afb94b44f57dull, 0x1d1be0eebac278f6ull}, {0xa1ba1ba79e1632dcull, 0x6462d92a69731733ull},
    {0xca28a291859bbf93ull, 0x7d7b8f7503cfdcffull}, {0xfcb2cb35e702af78ull, 0x5cda735244c3d43full},
    {0x9defbf01b061adabull, 0x3a0888136afa64a8ull}, {0xc56baec21c7a1916ull, 0x088aaa1845b8fdd1ull},
    {0xf6c69a72a3989f5bull, 0x8aad549e57273d46ull}, {0x9a3c2087a63f6399ull, 0x36ac54e2f678864cull},
    {0xc0cb28a98fcf3c7full, 0x84576a1bb416a7deull}, {0xf0fdf2d3f3c30b9full, 0x656d44a2a11c51d6ull},
    {0x969eb7c47859e743ull, 0x9f644ae5a4b1b326ull}, {0xbc4665b596706114ull, 0x873d5d9f0dde1fefull},
    {0xeb57ff22fc0c7959ull, 0xa90cb506d155a7ebull}, {0x9316ff75dd87cbd8ull, 0x09a7f12442d588f3ull},
    {0xb7dcbf5354e9beceull, 0x0c11ed6d538aeb30ull}, {0xe5d3ef282a242e81ull, 0x8f1668c8a86da5fbull},
    {0x8fa475791a569d10ull, 0xf96e017d694487bdull}, {0xb38d92d760ec4455ull, 0x37c981dcc395a9adull},
    {0xe070f78d3927556aull, 0x85bbe253f47b1418ull}, {0x8c469ab843b89562ull, 0x93956d7478ccec8full},
    {0xaf58416654a6babbull, 0x387ac8d1970027b3ull}, {0xdb2e51bfe9d0696aull, 0x06997b05fcc0319full},
    {0x88fcf317f22241e2ull, 0x441fece3bdf81f04ull}, {0xab3c2fddeeaad25aull, 0xd527e81cad7626c4ull},
    {0xd60b3bd56a5586f1ull, 0x8a71e223d8d3b075ull}, {0x85c7056562757456ull, 0xf6872d5667844e4aull},
    {0xa738c6bebb12d16cull, 0xb428f8ac016561dcull}, {0xd106f86e69d785c7ull, 0xe13336d701beba53ull},
    {0x82a45b450226b39cull, 0xecc0024661173474ull}, {0xa34d721642b06084ull, 0x27f002d7f95d0191ull},
    {0xcc20ce9bd35c78a5ull, 0x31ec038df7b441f5ull}, {0xff290242c83396ceull, 0x7e67047175a15272ull},
    {0x9f79a169bd203e41ull, 0x0f0062c6e984d387ull}, {0xc75809c42c684dd1ull, 0x52c07b78a3e60869ull},
    {0xf92e0c3537826145ull, 0xa7709a56ccdf8a83ull}, {0x9bbcc7a142b17ccbull, 0x88a66076400bb692ull},
    {0xc2abf989935ddbfeull, 0x6acff893d00ea436ull}, {0xf356f7ebf83552feull, 0x0583f6b8c4124d44ull},
    {0x98165af37b2153deull, 0xc3727a337a8b704bull}, {0xbe1bf1b059e9a8d6ull, 0x744f18c0592e4c5dull},
    {0xeda2ee1c7064130cull, 0x1162def06f79df74ull}, {0x9485d4d1c63e8be7ull, 0x8addcb5645ac2ba9ull},
    {0xb9a74a0637ce2ee1ull, 0x6d953e2bd7173693ull}, {0xe8111c87c5c1ba99ull, 0xc8fa8db6ccdd0438ull},
    {0x910ab1d4db9914a0ull, 0x1d9c9892400a22a3ull}, {0xb54d5e4a127f59c8ull, 0x2503beb6d00cab4cull},
    {0xe2a0b5dc971f303aull, 0x2e44ae64840fd61eull}, {0x8da471a9de737e24ull, 0x5ceaecfed289e5d3ull},
    {0xb10d8e1456105dadull, 0x7425a83e872c5f48ull}, {0xdd50f1996b947518ull, 0xd12f124e28f7771aull},
    {0x8a5296ffe33cc92full, 0x82bd6b70d99aaa70ull}, {0xace73cbfdc0bfb7bull, 0x636cc64d1001550cull},
    {0xd8210befd30efa5aull, 0x3c47f7e05401aa4full}, {0x8714a775e3e95c78ull, 0x65acfaec34810a72ull},
    {0xa8d9d1535ce3b396ull, 0x7f1839a741a14d0eull}, {0xd31045a8341ca07cull, 0x1ede48111209a051ull},
    {0x83ea2b892091e44dull, 0x934aed0aab460433ull}, {0xa4e4b66b68b65d60ull, 0xf81da84d56178540ull},
    {0xce1de40642e3f4b9ull, 0x36251260ab9d668full}, {0x80d2ae83e9ce78f3ull, 0xc1d72b7c6b42601aull},
    {0xa1075a24e4421730ull, 0xb24cf65b8612f820ull}, {0xc94930ae1d529cfcull, 0xdee033f26797b628ull},
    {0xfb9b7cd9a4a7443cull, 0x169840ef017da3b2ull}, {0x9d412e0806e88aa5ull, 0x8e1f289560ee864full},
    {0xc491798a08a2ad4eull, 0xf1a6f2bab92a27e3ull}, {0xf5b5d7ec8acb58a2ull, 0xae10af696774b1dcull},
    {0x9991a6f3d6bf1765ull, 0xacca6da1e0a8ef2aull}, {0xbff610b0cc6edd3full, 0x17fd090a58d32af4ull},
    {0xeff394dcff8a948eull, 0xddfc4b4cef07f5b1ull}, {0x95f83d0a1fb69cd9ull, 0x4abdaf101564f98full},
    {0xbb764c4ca7a4440full, 0x9d6d1ad41abe37f2ull}, {0xea53df5fd18d5513ull, 0x84c86189216dc5eeull},
    {0x92746b9be2f8552cull, 0x32fd3cf5b4e49bb5ull}, {0xb7118682dbb66a77ull, 0x3fbc8c33221dc2a2ull},
    {0xe4d5e82392a40515ull, 0x0fabaf3feaa5334bull}, {0x8f05b1163ba6832dull, 0x29cb4d87f2a7400full},
    {0xb2c71d5bca9023f8ull, 0x743e20e9ef511013ull}, {0xdf78e4b2bd342cf6ull, 0x914da9246b255417ull},
    {0x8bab8eefb6409c1aull, 0x1ad089b6c2f7548full}, {0xae9672aba3d0c320ull, 0xa184ac2473b529b2ull},
    {0xda3c0f568cc4f3e8ull, 0xc9e5d72d90a2741full}, {0x8865899617fb1871ull, 0x7e2fa67c7a658893ull},
    {0xaa7eebfb9df9de8dull, 0xddbb901b98feeab8ull}, {0xd51ea6fa85785631ull, 0x552a74227f3ea566ull},
    {0x8533285c936b35deull, 0xd53a88958f872760ull}, {0xa67ff273b8460356ull, 0x8a892abaf368f138ull},
    {0xd01fef10a657842cull, 0x2d2b7569b0432d86ull}, {0x8213f56a67f6b29bull, 0x9c3b29620e29fc74ull},
    {0xa298f2c501f45f42ull, 0x8349f3ba91b47b90ull}, {0xcb3f2f7642717713ull, 0x241c70a936219a74ull},
    {0xfe0efb53d30dd4d7ull, 0xed238cd383aa0111ull}, {0x9ec95d1463e8a506ull, 0xf4363804324a40abull},
    {0xc67bb4597ce2ce48ull, 0xb143c6053edcd0d6ull}, {0xf81aa16fdc1b81daull, 0xdd94b7868e94050bull},
    {0x9b10a4e5e9913128ull, 0xca7cf2b4191c8327ull}, {0xc1d4ce1f63f57d72ull, 0xfd1c2f611f63a3f1ull},
    {0xf24a01a73cf2dccfull, 0xbc633b39673c8cedull}, {0x976e41088617ca01ull, 0xd5be0503e085d814ull},
    {0xbd49d14aa79dbc82ull, 0x4b2d8644d8a74e19ull}, {0xec9c459d51852ba2ull, 0xddf8e7d60ed1219full},
    {0x93e1ab8252f33b45ull, 0xcabb90e5c942b504ull}, {0xb8da1662e7b00a17ull, 0x3d6a751f3b936244ull},
    {0xe7109bfba19c0c9dull, 0x0cc512670a783ad5ull}, {0x906a617d450187e2ull, 0x27fb2b80668b24c6ull},
    {0xb484f9dc9641e9daull, 0xb1f9f660802dedf7ull}, {0xe1a63853bbd26451ull, 0x5e7873f8a0396974ull},
    {0x8d07e33455637eb2ull, 0xdb0b487b6423e1e9ull}, {0xb049dc016abc5e5full, 0x91ce1a9a3d2cda63ull},
    {0xdc5c5301c56b75f7ull, 0x7641a140cc7810fcull}, {0x89b9b3e11b6329baull, 0xa9e904c87fcb0a9eull},
    {0xac2820d9623bf429ull, 0x546345fa9fbdcd45ull}, {0xd732290fbacaf133ull, 0xa97c177947ad4096ull},
    {0x867f59a9d4bed6c0ull, 0x49ed8eabcccc485eull}, {0xa81f301449ee8c70ull, 0x5c68f256bfff5a75ull},
    {0xd226fc195c6a2f8cull, 0x73832eec6fff3112ull}, {0x83585d8fd9c25db7ull, 0xc831fd53c5ff7eacull},
    {0xa42e74f3d032f525ull, 0xba3e7ca8b77f5e56ull}, {0xcd3a1230c43fb26full, 0x28ce1bd2e55f35ecull},
    {0x80444b5e7aa7cf85ull, 0x7980d163cf5b81b4ull}, {0xa0555e361951c366ull, 0xd7e105bcc3326220ull},
    {0xc86ab5c39fa63440ull, 0x8dd9472bf3fefaa8ull}, {0xfa856334878fc150ull, 0xb14f98f6f0feb952ull},
    {0x9c935e00d4b9d8d2ull, 0x6ed1bf9a569f33d4ull}, {0xc3b8358109e84f07ull, 0x0a862f80ec4700c9ull},
    {0xf4a642e14c6262c8ull, 0xcd27bb612758c0fbull}, {0x98e7e9cccfbd7dbdull, 0x8038d51cb897789dull},
    {0xbf21e44003acdd2cull, 0xe0470a63e6bd56c4ull}, {0xeeea5d5004981478ull, 0x1858ccfce06cac75ull},
    {0x95527a5202df0ccbull, 0x0f37801e0c43ebc9ull}, {0xbaa718e68396cffdull, 0xd30560258f54e6bbull},
    {0xe950df20247c83fdull, 0x47c6b82ef32a206aull}, {0x91d28b7416cdd27eull, 0x4cdc331d57fa5442ull},
    {0xb6472e511c81471dull, 0xe0133fe4adf8e953ull}, {0xe3d8f9e563a198e5ull, 0x58180fddd97723a7ull},
    {0x8e679c2f5e44ff8full, 0x570f09eaa7ea7649ull}, {0xb201833b35d63f73ull, 0x2cd2cc6551e513dbull},
    {0xde81e40a034bcf4full, 0xf8077f7ea65e58d2ull}, {0x8b112e86420f6191ull, 0xfb04afaf27faf783ull},
    {0xadd57a27d29339f6ull, 0x79c5db9af1f9b564ull}, {0xd94ad8b1c7380874ull, 0x18375281ae7822bdull},
    {0x87cec76f1c830548ull, 0x8f2293910d0b15b6ull}, {0xa9c2794ae3a3c69aull, 0xb2eb3875504ddb23ull},
    {0xd433179d9c8cb841ull, 0x5fa60692a46151ecull}, {0x849feec281d7f328ull, 0xdbc7c41ba6bcd334ull},
    {0xa5c7ea73224deff3ull, 0x12b9b522906c0801ull}, {0xcf39e50feae16befull, 0xd768226b34870a01ull},
    {0x81842f29f2cce375ull, 0xe6a1158300d46641ull}, {0xa1e53af46f801c53ull, 0x60495ae3c1097fd1ull},
    {0xca5e89b18b602368ull, 0x385bb19cb14bdfc5ull}, {0xfcf62c1dee382c42ull, 0x46729e03dd9ed7b6ull},
    {0x9e19db92b4e31ba9ull, 0x6c07a2c26a8346d2ull},
};

/* X = cp G / 2^128 (G = 10^e 2^-t, so that X is x's bound scaled by 10^-k),
 * estimated by cp g / 2^128, which exceeds X by less than cp / 2^128 <
 * 2^-69: returns the estimate's floor.  Where its fraction exceeds that
 * error, the floor is X's and X is not an integer; where not, *unsure is
 * set (X an integer, or within 2^-69 of one). */
static inline uint64_t estimate(const uint64_t *g, uint64_t cp, int *unsure)
{
    u128 lo = (u128)cp * g[1], hi = (u128)cp * g[0];
    uint64_t carried = (uint64_t)(lo >> 64), mid = (uint64_t)hi + carried;
    *unsure |= (mid == 0) & ((uint64_t)lo <= cp);
    return (uint64_t)(hi >> 64) + (mid < carried);
}

/* Is cbx 2^q 10^-k an integer?  For k <= 0 it is cbx 5^-k 2^(q-k); for
 * k > 0 (then q > k) cbx 2^(q-k) / 5^k, and cbx < 2^56 < 5^25. */
static int is_integer(uint64_t cbx, int q, int k)
{
    if (k <= 0)
        return q - k >= 0 || __builtin_ctzll(cbx) >= k - q;
    return k <= 27 && cbx % pow5_u64[k] == 0;
}

/* The estimate of cbx 2^q 10^-k rounded to odd: its floor, with the low bit
 * set where it is not an integer (comparisons with even integers then are
 * exact); 0 where undecided (never met: the fall-back is the exact path). */
static uint64_t settle(const uint64_t *g, uint64_t cbx, int h, int q, int k)
{
    int unsure = 0;
    uint64_t v = estimate(g, cbx << h, &unsure);
    if (!unsure)
        return v | 1;
    return is_integer(cbx, q, k) ? v : 0;
}

/* x = c 2^q (asym: c = 2^52 above the least exponent, where the gap below x
 * is half the gap above): the shortest decimal d 10^k inside x's rounding
 * interval, the nearest x where two are (ties to even), as Giulietti's
 * Schubfach.  With k = floor(log10 of the interval's width) the scaled
 * interval is 1 to 10 wide: it holds at most one multiple of 10 and one of
 * s = floor(x 10^-k), s + 1.  The bounds are scaled by 4 (cb = 4c) so that
 * they are integers before the scaling.  Returns 0 where undecided. */
static int schubfach(uint64_t c, int q, int asym, uint64_t *d, int *k10)
{
    /* k = floor(log10 2^q), or floor(log10 (3/4) 2^q) at a power of two; h
     * = q + floor(log2 10^-k) + 1, 1..4 (integer forms checked for every
     * exponent of a double) */
    int k = asym ? (q * 1262611 - 524031) >> 22 : (q * 1262611) >> 22;
    int h = q + ((-k * 1741647) >> 19) + 1, unsure = 0, open = (int)(c & 1);
    const uint64_t *g = pow10_g[-k - POW10_MIN];
    uint64_t cb = c << 2, cbl = cb - 2 + (uint64_t)asym, cbr = cb + 2;
    uint64_t vb = estimate(g, cb << h, &unsure) | 1, vbl = estimate(g, cbl << h, &unsure) | 1,
             vbr = estimate(g, cbr << h, &unsure) | 1;
    if (unsure) {
        vb = settle(g, cb, h, q, k), vbl = settle(g, cbl, h, q, k),
        vbr = settle(g, cbr, h, q, k);
        if (!vb || !vbl || !vbr)
            return 0;
    }
    /* the decisions without branches: they go either way at random */
    uint64_t s = vb >> 2, s10 = s / 10, t = s + 1, mid = (s + t) << 1; /* 4 (s + 1/2) */
    int upin = vbl + open <= s10 * 40, wpin = s10 * 40 + 40 + open <= vbr;
    int uin = vbl + open <= s << 2, win = (t << 2) + open <= vbr;
    /* t where s is outside, or both are inside and t is nearer (ties to
     * the even one) */
    int up = !uin || (win && (vb > mid || (vb == mid && (s & 1))));
    int tens = upin != wpin;
    *d = tens ? s10 + (uint64_t)wpin : s + (uint64_t)up;
    *k10 = k + tens;
    return tens || uin || win;
}

/* the two digits of v < 100 as a 16-bit word (bytes in memory order) */
static inline uint64_t digit_pair(uint32_t v)
{
    uint16_t t;
    memcpy(&t, digit_pairs + 2 * v, 2);
    return t;
}

/* The 8 digits of v < 10^8 as a word, the first first in memory: four
 * look-ups of two digits, no store in between. */
static inline uint64_t digits8(uint32_t v)
{
    uint32_t a = v / 10000, b = v % 10000;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return digit_pair(b % 100) | digit_pair(b / 100) << 16 | digit_pair(a % 100) << 32 |
           digit_pair(a / 100) << 48;
#else
    return digit_pair(a / 100) | digit_pair(a % 100) << 16 | digit_pair(b / 100) << 32 |
           digit_pair(b % 100) << 48;
#endif
}

/* the number of decimal digits of d, 1 <= d < 10^17 */
static inline int digit_count(uint64_t d)
{
    int n = ((64 - __builtin_clzll(d)) * 1233) >> 12; /* floor(bits log10 2) */
    return n + (d >= pow10_u64[n]);
}

/* sign and d 10^k (d < 10^17 without trailing zeros, n digits) in %.17g's
 * layout.  The 17 digits of d (leading zeros, then 16 zeros for an
 * integer's places) go to dig from d itself, not waiting for n: a first
 * digit and two words of 8; the n from dig + 17 - n are copied in pieces
 * of fixed size (no call).  Bytes past the end are scratch within buf's
 * TS_NUM_MAX. */
static size_t layout_shortest(char *buf, int neg, uint64_t d, int n, int k)
{
    char dig[40], *p = buf + neg;
    uint32_t hi = (uint32_t)(d / 100000000u);
    uint64_t w0 = digits8(hi % 100000000u), w1 = digits8((uint32_t)(d % 100000000u));
    dig[0] = (char)('0' + hi / 100000000u);
    memcpy(dig + 1, &w0, 8), memcpy(dig + 9, &w1, 8);
    memcpy(dig + 17, "0000000000000000", 16);
    const char *g = dig + 17 - n;
    int E = n - 1 + k;
    buf[0] = '-';
    if (E < -4 || E >= 17) { /* d.ddde-XX: p + 18 <= buf + 19 */
        p[0] = g[0], p[1] = '.';
        memcpy(p + 2, g + 1, 16);
        p += n + (n > 1);
        p[0] = 'e', p[1] = E < 0 ? '-' : '+';
        unsigned ae = (unsigned)(E < 0 ? -E : E);
        if (ae >= 100)
            p[2] = (char)('0' + ae / 100), p++;
        memcpy(p + 2, digit_pairs + 2 * (ae % 100), 2);
        p += 4;
    } else if (E < 0) { /* 0.000ddd: p + 18 <= buf + 23 */
        memcpy(p, "0.0000", 6);
        p -= E;
        memcpy(p + 1, g, 17);
        p += n + 1;
    } else { /* ddd (the zeros after d are places) or ddd.ddd */
        int j = E + 1; /* digits before the '.' */
        memcpy(p, g, 17);
        if (n > j) { /* the rest one place on: p + j + 17 <= buf + 26 */
            p[j] = '.';
            memcpy(p + j + 1, g + j, 8);
            if (j < 9)
                memcpy(p + j + 9, g + j + 8, 8);
            p++;
        }
        p += n > j ? n : j;
    }
    *p = '\0';
    return (size_t)(p - buf);
}

size_t ts_format_double(char *buf, double x, int digits)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (digits == 0 && (bits << 1) == 0) { /* "0" or "-0", as %g writes zeros */
        size_t neg = (size_t)(bits >> 63);
        buf[0] = '-', buf[neg] = '0', buf[neg + 1] = '\0';
        return neg + 1;
    }
    int be = (int)((bits >> 52) & 0x7ff);
    /* powers of two from 2^52 keep the exact path's printf digits: the
     * nearest p-digit decimal that reads back, which is one digit longer
     * than the shortest for 27 of them (2^89, 2^122, ...) */
    if (digits != 0 || be == 0x7ff || ((bits << 12) == 0 && be >= 1075))
        return ts_format_double_exact(buf, x, digits);
    uint64_t m = bits & ((1ull << 52) - 1), d;
    int k;
    if (!schubfach(be ? m | 1ull << 52 : m, be ? be - 1075 : -1074, m == 0 && be > 1, &d, &k))
        return ts_format_double_exact(buf, x, 0);
    while (d % 10 == 0) /* d 10^k with more trailing zeros (1 in 10) */
        d /= 10, k++;
    return layout_shortest(buf, (int)(bits >> 63), d, digit_count(d), k);
}
