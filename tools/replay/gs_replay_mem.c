/* The replay's operands; see gs_replay_mem.h. */
#include "gs_replay_mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random values are written as a tile this large, copied over each
 * operand (then the filled part doubled): a few copies fill a gigabyte. */
enum { TILE_BYTES = 1 << 20 };

/* A simulated arena's first address: 256-byte aligned, never dereferenced
 * (the shim launches nothing on a simulated device, the fake cuBLAS reads
 * no operand). */
#define SIMULATED_BASE ((uintptr_t)0x7f0000000000ull)

/* The bytes an operand at `off` from a 256-byte boundary takes, up to the
 * next boundary; none for a NULL pointer. */
static size_t slot_bytes(uint32_t off, size_t bytes)
{
    if (off == GS_REPLAY_NULL)
        return 0;
    const size_t s = (off + bytes + 255) / 256 * 256;
    return s ? s : 256;
}

/* The operand's pointer at *p + off; *p moves past its slot. */
static void *take(char **p, uint32_t off, size_t bytes)
{
    if (off == GS_REPLAY_NULL)
        return NULL;
    void *ptr = *p + off;
    *p += slot_bytes(off, bytes);
    return ptr;
}

static uint64_t next_random(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* fp16 bits of v, exact for the tile's values (0 and +-j/8, j = 1..8:
 * normal numbers with a 3-bit mantissa). */
static uint16_t half_of(float v)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    const uint32_t sign = (b >> 16) & 0x8000u;
    if (!(b & 0x7fffffffu))
        return (uint16_t)sign;
    const uint32_t exp = ((b >> 23) & 0xffu) - 127u + 15u, mant = (b >> 13) & 0x3ffu;
    return (uint16_t)(sign | exp << 10 | mant);
}

/* FP8 bits of v (mbits mantissa bits, exponent bias `bias`), exact for the
 * tile's values: 0 and +-j/8, whose 3 significant bits e4m3 keeps, and
 * e5m2 too (j/8 for j = 1..8 needs at most 2 bits after the leading one). */
static uint8_t fp8_of(float v, int mbits, int bias)
{
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    const uint32_t sign = (b >> 24) & 0x80u;
    if (!(b & 0x7fffffffu))
        return (uint8_t)sign;
    const uint32_t exp = ((b >> 23) & 0xffu) - 127u + (uint32_t)bias,
                   mant = (b >> (23 - mbits)) & ((1u << mbits) - 1u);
    return (uint8_t)(sign | exp << mbits | mant);
}

/* The bits of v in type t (its size es), into dst. */
static void put(unsigned char *dst, float v, gs_dtype_t t, size_t es)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (es == 4) {
        memcpy(dst, &bits, 4);
    } else if (es == 2) {
        const uint16_t h = t == GS_DT_BF16 ? (uint16_t)(bits >> 16) : half_of(v);
        memcpy(dst, &h, 2);
    } else {
        *dst = t == GS_DT_E4M3 ? fp8_of(v, 3, 7) : fp8_of(v, 2, 15);
    }
}

/* The device tile of type t: values j/8, j uniform in -8..8, exact in every
 * type, whose sums over any k stay far inside fp16's range. */
static const void *tile_of(gs_replay_mem_t *m, gs_dtype_t t)
{
    if (m->tiles_from)
        return tile_of(m->tiles_from, t);
    if (m->tile[t])
        return m->tile[t];
    const size_t es = gs_dtype_size(t);
    unsigned char *host = malloc(TILE_BYTES);
    if (!host)
        return NULL;
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (uint64_t)t;
    for (size_t i = 0; i < TILE_BYTES / es; ++i) {
        const float v = (float)((int)(next_random(&x) % 17) - 8) / 8.0f;
        put(host + i * es, v, t, es);
    }
    void *dev = NULL;
    if (cudaMalloc(&dev, TILE_BYTES) != cudaSuccess ||
        cudaMemcpy(dev, host, TILE_BYTES, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaGetLastError();
        cudaFree(dev);
        dev = NULL;
    }
    free(host);
    return m->tile[t] = dev;
}

/* bytes at dst from type t's tile: the tile once, then the filled part
 * copied after itself. */
static cudaError_t fill(gs_replay_mem_t *m, void *dst, size_t bytes, gs_dtype_t t)
{
    if (!dst || !bytes)
        return cudaSuccess;
    const void *tile = tile_of(m, t);
    if (!tile)
        return cudaErrorMemoryAllocation;
    char *d = dst;
    size_t done = bytes < TILE_BYTES ? bytes : TILE_BYTES;
    cudaError_t e = cudaMemcpyAsync(d, tile, done, cudaMemcpyDeviceToDevice, m->stream);
    while (!e && done < bytes) {
        const size_t n = bytes - done < done ? bytes - done : done;
        e = cudaMemcpyAsync(d + done, d, n, cudaMemcpyDeviceToDevice, m->stream);
        done += n;
    }
    return e;
}

/* The element types a rebuilt call has (gs_replay_args_of). */
static gs_dtype_t dtype_of(cudaDataType t)
{
    switch (t) {
    case CUDA_R_32F: return GS_DT_F32;
    case CUDA_R_16F: return GS_DT_F16;
    case CUDA_R_8F_E4M3: return GS_DT_E4M3;
    case CUDA_R_8F_E5M2: return GS_DT_E5M2;
    default: return GS_DT_BF16;
    }
}

/* A scale vector's offset: none without one, else on a 256-byte boundary
 * (the class keeps no scale's alignment; cuBLASLt's vectors want 16). */
static uint32_t scale_off(size_t bytes)
{
    return bytes ? 0 : GS_REPLAY_NULL;
}

/* The arena holds at least `need` bytes: 0, or -1. */
static int reserve(gs_replay_mem_t *m, size_t need)
{
    if (need <= m->cap)
        return 0;
    cudaFree(m->base);
    m->base = NULL;
    m->cap = 0;
    if (cudaMalloc((void **)&m->base, need) != cudaSuccess) {
        cudaGetLastError();
        m->base = NULL;
        return -1;
    }
    m->cap = need;
    return 0;
}

size_t gs_replay_mem_need(const gs_replay_args_t *a)
{
    const size_t scalar = sizeof(float);
    return slot_bytes(a->off_a, a->bytes_a) + slot_bytes(a->off_b, a->bytes_b) +
           slot_bytes(a->off_c, a->bytes_c) + slot_bytes(a->off_bias, a->bytes_bias) +
           slot_bytes(scale_off(a->bytes_scale_a), a->bytes_scale_a) +
           slot_bytes(scale_off(a->bytes_scale_b), a->bytes_scale_b) +
           (a->scalars_on_device ? slot_bytes(a->off_alpha, scalar) +
                                       slot_bytes(a->off_beta, scalar)
                                 : 0);
}

/* The FP8 subset's scale factors: positive values j/8, j = 1..8 (a zero
 * factor would leave nothing of the product to compare), copied from
 * *host, which the caller frees once the stream has them. */
static cudaError_t scale_factors(gs_replay_mem_t *m, const gs_replay_ops_t *o,
                                 const gs_replay_args_t *a, float **host)
{
    const size_t most = a->bytes_scale_a > a->bytes_scale_b ? a->bytes_scale_a : a->bytes_scale_b;
    float *f = *host = malloc(most);
    if (!f)
        return cudaErrorMemoryAllocation;
    for (size_t i = 0; i < most / sizeof *f; ++i)
        f[i] = (float)(1 + (i * 5) % 8) / 8.0f;
    cudaError_t e = cudaSuccess;
    if (a->bytes_scale_a)
        e = cudaMemcpyAsync(o->scale_a, f, a->bytes_scale_a, cudaMemcpyHostToDevice, m->stream);
    if (!e && a->bytes_scale_b)
        e = cudaMemcpyAsync(o->scale_b, f, a->bytes_scale_b, cudaMemcpyHostToDevice, m->stream);
    return e;
}

int gs_replay_mem_place(gs_replay_mem_t *m, const gs_replay_args_t *a, gs_replay_ops_t *o,
                        char *why, size_t why_size)
{
    const size_t scalar = sizeof(float);
    const int dev_scalars = a->scalars_on_device;
    const size_t need = gs_replay_mem_need(a);
    if (!m->simulated && reserve(m, need)) {
        snprintf(why, why_size, "its operands (%.1f MiB) do not fit in device memory",
                 (double)need / (1 << 20));
        return -1;
    }
    char *p = m->simulated ? (char *)SIMULATED_BASE : m->base;
    o->A = take(&p, a->off_a, a->bytes_a);
    o->B = take(&p, a->off_b, a->bytes_b);
    o->C = take(&p, a->off_c, a->bytes_c);
    o->bias = take(&p, a->off_bias, a->bytes_bias);
    o->scale_a = take(&p, scale_off(a->bytes_scale_a), a->bytes_scale_a);
    o->scale_b = take(&p, scale_off(a->bytes_scale_b), a->bytes_scale_b);
    if (dev_scalars) {
        o->alpha = take(&p, a->off_alpha, scalar);
        o->beta = take(&p, a->off_beta, scalar);
    } else {
        o->alpha = m->host + a->off_alpha;
        o->beta = m->host + 256 + a->off_beta;
        memcpy(m->host + a->off_alpha, &a->alpha, scalar);
        memcpy(m->host + 256 + a->off_beta, &a->beta, scalar);
    }
    if (m->simulated)
        return 0;
    cudaError_t e = fill(m, o->A, a->bytes_a, dtype_of(a->a_type));
    if (!e)
        e = fill(m, o->B, a->bytes_b, dtype_of(a->b_type));
    if (!e)
        e = fill(m, o->C, a->bytes_c, dtype_of(a->c_type));
    if (!e)
        e = fill(m, o->bias, a->bytes_bias, dtype_of(a->bias_type));
    float *factors = NULL;
    if (!e && (a->bytes_scale_a || a->bytes_scale_b))
        e = scale_factors(m, o, a, &factors);
    if (!e && dev_scalars)
        e = cudaMemcpyAsync((void *)o->alpha, &a->alpha, scalar, cudaMemcpyHostToDevice,
                            m->stream);
    if (!e && dev_scalars)
        e = cudaMemcpyAsync((void *)o->beta, &a->beta, scalar, cudaMemcpyHostToDevice,
                            m->stream);
    if (!e)
        e = cudaStreamSynchronize(m->stream);
    free(factors); /* copied: the stream is synchronized, or failed */
    if (e) {
        cudaGetLastError();
        snprintf(why, why_size, "filling its operands failed: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

void gs_replay_mem_free(gs_replay_mem_t *m)
{
    if (m->simulated)
        return;
    if (m->base)
        cudaFree(m->base);
    for (size_t i = 0; !m->tiles_from && i < sizeof m->tile / sizeof m->tile[0]; ++i)
        if (m->tile[i])
            cudaFree(m->tile[i]);
    memset(m->tile, 0, sizeof m->tile);
    m->base = NULL;
    m->cap = 0;
}
