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
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        const uint16_t h = t == GS_DT_BF16 ? (uint16_t)(bits >> 16) : half_of(v);
        memcpy(host + i * es, es == 4 ? (const void *)&bits : (const void *)&h, es);
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
    return t == CUDA_R_32F ? GS_DT_F32 : t == CUDA_R_16F ? GS_DT_F16 : GS_DT_BF16;
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
           (a->scalars_on_device ? slot_bytes(a->off_alpha, scalar) +
                                       slot_bytes(a->off_beta, scalar)
                                 : 0);
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
    if (!e && dev_scalars)
        e = cudaMemcpyAsync((void *)o->alpha, &a->alpha, scalar, cudaMemcpyHostToDevice,
                            m->stream);
    if (!e && dev_scalars)
        e = cudaMemcpyAsync((void *)o->beta, &a->beta, scalar, cudaMemcpyHostToDevice,
                            m->stream);
    if (!e)
        e = cudaStreamSynchronize(m->stream);
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
