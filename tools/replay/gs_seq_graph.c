/* A recorded sequence rebuilt, captured and timed; see gs_seq_graph.h. */
#include "gs_seq_graph.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A block of replays is at most this many: a sequence of tiny GEMMs is
 * timed over enough of them, a heavy one over one. */
enum { REPS_MAX = 1000 };

#define CUDA_TRY(what, call)                                                          \
    do {                                                                              \
        const cudaError_t e_ = (call);                                                \
        if (e_ != cudaSuccess) {                                                      \
            cudaGetLastError();                                                       \
            snprintf(why, why_size, "%s: %s", what, cudaGetErrorString(e_));          \
            goto fail;                                                                \
        }                                                                             \
    } while (0)

/* Which operand set each GEMM uses: its own where the whole sequence's fit
 * in budget; else each class has min(copies, its GEMMs) sets, its GEMMs
 * taking them in turn, copies as many as fit. Fills slot[n], returns the
 * number of sets (0: no memory). */
static size_t assign(gs_seq_graph_t *sg, const size_t *pos, const gs_replay_args_t *args,
                     size_t budget, size_t *slot)
{
    const size_t n = sg->n;
    size_t top = 0, total = 0, per_set = 0, classes = 0;
    for (size_t i = 0; i < n; ++i) {
        top = pos[i] > top ? pos[i] : top;
        total += gs_replay_mem_need(&args[pos[i]]);
    }
    if (sg->g->simulated || total <= budget) {
        for (size_t i = 0; i < n; ++i)
            slot[i] = i;
        sg->copies = n;
        return n;
    }
    /* per class (by its signature index): GEMMs seen, first set, sets */
    size_t *seen = calloc(top + 1, sizeof *seen), *first = calloc(top + 1, sizeof *first),
           *sets = calloc(top + 1, sizeof *sets);
    size_t n_sets = 0;
    if (seen && first && sets) {
        for (size_t i = 0; i < n; ++i)
            if (!seen[pos[i]]++) {
                per_set += gs_replay_mem_need(&args[pos[i]]);
                ++classes;
            }
        const size_t copies = per_set && budget / per_set > 1 ? budget / per_set : 1;
        for (size_t c = 0; c <= top; ++c)
            if (seen[c]) {
                sets[c] = seen[c] < copies ? seen[c] : copies;
                first[c] = n_sets;
                n_sets += sets[c];
                seen[c] = 0; /* now: the class's GEMMs placed so far */
            }
        for (size_t i = 0; i < n; ++i) {
            const size_t c = pos[i];
            slot[i] = first[c] + seen[c]++ % sets[c];
        }
        sg->copies = copies;
    }
    free(seen);
    free(first);
    free(sets);
    return n_sets;
}

int gs_seq_graph_open(gs_seq_graph_t *sg, gs_replay_gpu_t *g, const size_t *pos, size_t n,
                      const gs_replay_args_t *args, size_t budget, char *why, size_t why_size)
{
    memset(sg, 0, sizeof *sg);
    sg->g = g;
    sg->n = n;
    size_t *slot = malloc(n * sizeof *slot);
    sg->call = calloc(n, sizeof *sg->call);
    gs_replay_ops_t *ops = NULL;
    unsigned char *placed = NULL;
    if (!slot || !sg->call || !(sg->n_mem = assign(sg, pos, args, budget, slot))) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    /* 256-byte aligned: the arenas' host scalars are */
    sg->mem = aligned_alloc(256, sg->n_mem * sizeof *sg->mem);
    ops = calloc(sg->n_mem, sizeof *ops);
    placed = calloc(sg->n_mem, 1);
    if (!sg->mem || !ops || !placed) {
        snprintf(why, why_size, "out of memory");
        goto fail;
    }
    memset(sg->mem, 0, sg->n_mem * sizeof *sg->mem);
    for (size_t m = 0; m < sg->n_mem; ++m) {
        sg->mem[m].simulated = g->simulated;
        sg->mem[m].stream = g->stream;
        sg->mem[m].tiles_from = m ? &sg->mem[0] : NULL; /* one set of random tiles */
    }
    for (size_t i = 0; i < n; ++i) {
        gs_replay_call_t *c = &sg->call[i];
        c->a = &args[pos[i]];
        if (!placed[slot[i]]) {
            if (gs_replay_mem_place(&sg->mem[slot[i]], c->a, &ops[slot[i]], why, why_size))
                goto fail;
            placed[slot[i]] = 1;
            sg->bytes += gs_replay_mem_need(c->a);
        }
        c->ops = ops[slot[i]];
        if (gs_replay_prepare(g, c, why, why_size) != CUBLAS_STATUS_SUCCESS)
            goto fail;
    }
    free(slot);
    free(ops);
    free(placed);
    return 0;
fail:
    free(slot);
    free(ops);
    free(placed);
    gs_seq_graph_close(sg);
    return -1;
}

int gs_seq_graph_issue(gs_seq_graph_t *sg, char *why, size_t why_size)
{
    for (size_t i = 0; i < sg->n; ++i) {
        cublasStatus_t st = gs_replay_select(sg->g, &sg->call[i], why, why_size);
        if (st != CUBLAS_STATUS_SUCCESS)
            return -1;
        st = gs_replay_issue(sg->g, &sg->call[i]);
        if (st != CUBLAS_STATUS_SUCCESS) {
            snprintf(why, why_size, "GEMM %zu of the sequence returned cuBLAS status %d", i,
                     (int)st);
            return -1;
        }
    }
    return 0;
}

int gs_seq_graph_capture(gs_seq_graph_t *sg, cudaGraphExec_t *out, char *why, size_t why_size)
{
    cudaStream_t s = sg->g->stream;
    cudaGraph_t graph = NULL;
    *out = NULL;
    if (gs_seq_graph_issue(sg, why, why_size))
        return -1;
    CUDA_TRY("the sequence issued eagerly", cudaStreamSynchronize(s));
    CUDA_TRY("cudaStreamBeginCapture", cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    const int issued = gs_seq_graph_issue(sg, why, why_size);
    const cudaError_t e = cudaStreamEndCapture(s, &graph);
    if (issued)
        goto fail;
    CUDA_TRY("cudaStreamEndCapture", e);
    CUDA_TRY("cudaGraphInstantiate", cudaGraphInstantiate(out, graph, 0));
    CUDA_TRY("cudaGraphUpload", cudaGraphUpload(*out, s));
    cudaGraphDestroy(graph);
    return 0;
fail:
    if (graph)
        cudaGraphDestroy(graph);
    if (*out)
        cudaGraphExecDestroy(*out);
    *out = NULL;
    cudaGetLastError();
    return -1;
}

/* Round r's v-th graph: the order rotates, and every other round runs it
 * backwards, so no graph always follows the same one. */
static size_t turn(size_t r, size_t i, size_t nv)
{
    const size_t start = r % nv;
    return r & 1 ? (start + nv - 1 - i) % nv : (start + i) % nv;
}

int gs_seq_graph_time(const gs_replay_gpu_t *g, const cudaGraphExec_t *ex, size_t nv,
                      size_t rounds, double block_ms, double *ms, char *why, size_t why_size)
{
    cudaStream_t s = g->stream;
    cudaEvent_t *ev = calloc(2 * nv, sizeof *ev);
    int rc = -1;
    if (!ev) {
        snprintf(why, why_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < 2 * nv; ++i)
        CUDA_TRY("cudaEventCreate", cudaEventCreate(&ev[i]));
    /* warm, then one replay each to size the blocks */
    for (size_t v = 0; v < nv; ++v)
        CUDA_TRY("a graph replay", cudaGraphLaunch(ex[v], s));
    CUDA_TRY("a graph replay", cudaStreamSynchronize(s));
    double shortest = INFINITY;
    for (size_t v = 0; v < nv; ++v) {
        float t = 0.f;
        CUDA_TRY("cudaEventRecord", cudaEventRecord(ev[0], s));
        CUDA_TRY("a graph replay", cudaGraphLaunch(ex[v], s));
        CUDA_TRY("cudaEventRecord", cudaEventRecord(ev[1], s));
        CUDA_TRY("a graph replay", cudaEventSynchronize(ev[1]));
        CUDA_TRY("cudaEventElapsedTime", cudaEventElapsedTime(&t, ev[0], ev[1]));
        shortest = t < shortest ? t : shortest;
    }
    const double want = shortest > 0.0 ? ceil(block_ms / shortest) : REPS_MAX;
    const int reps = want < 1.0 ? 1 : want > REPS_MAX ? REPS_MAX : (int)want;
    for (size_t r = 0; r < rounds; ++r) {
        /* an untimed replay first: the GPU is busy while the host queues
         * the timed ones, so no block starts with the host's launch gap */
        CUDA_TRY("a graph replay", cudaGraphLaunch(ex[turn(r, 0, nv)], s));
        for (size_t i = 0; i < nv; ++i) {
            const size_t v = turn(r, i, nv);
            CUDA_TRY("cudaEventRecord", cudaEventRecord(ev[2 * v], s));
            for (int k = 0; k < reps; ++k)
                CUDA_TRY("a graph replay", cudaGraphLaunch(ex[v], s));
            CUDA_TRY("cudaEventRecord", cudaEventRecord(ev[2 * v + 1], s));
        }
        CUDA_TRY("a graph replay", cudaStreamSynchronize(s));
        for (size_t v = 0; v < nv; ++v) {
            float t = 0.f;
            CUDA_TRY("cudaEventElapsedTime", cudaEventElapsedTime(&t, ev[2 * v], ev[2 * v + 1]));
            ms[v * rounds + r] = (double)t / reps;
        }
    }
    rc = 0;
fail:
    for (size_t i = 0; i < 2 * nv; ++i)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    free(ev);
    return rc;
}

void gs_seq_graph_close(gs_seq_graph_t *sg)
{
    if (sg->call)
        for (size_t i = 0; i < sg->n; ++i)
            gs_replay_release(&sg->call[i]);
    /* the arenas that borrow the first one's tiles go first */
    for (size_t m = sg->n_mem; sg->mem && m-- > 0;)
        gs_replay_mem_free(&sg->mem[m]);
    free(sg->call);
    free(sg->mem);
    memset(sg, 0, sizeof *sg);
}
