/* cublasLtMatmul -> gs_call_t; see gs_lt.h. Attribute sizes follow
 * cublasLt.h (int32 enums, uint64 rows/cols, int64 ld and strides, int8
 * FAST_ACCUM). */
#include "gs_lt.h"
#include "gs_compat.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Appends a reason to c->lt_unroutable, "; " before it unless it is the
 * first. The list is bounded: a reason that would leave no room to say
 * more were left out ends it with "..." instead, and later ones are
 * dropped. */
static void append(gs_call_t *c, const char *fmt, va_list ap)
{
    static const char more[] = "; ...";
    char *w = c->lt_unroutable;
    const size_t size = sizeof c->lt_unroutable, len = strlen(w);
    if (len >= 3 && !strcmp(w + len - 3, "..."))
        return; /* full */
    char one[GS_LT_WHY_MAX];
    vsnprintf(one, sizeof one, fmt, ap);
    if (len + (len ? 2 : 0) + strlen(one) + sizeof more <= size)
        snprintf(w + len, size - len, "%s%s", len ? "; " : "", one);
    else
        snprintf(w + len, size - len, "%s", len ? more : more + 2);
}

/* While the call is read, lt_algos_only is -1 once a reason outside the
 * FP8 subset was given (gs_lt_describe settles it to 0 or 1 at the end). */
enum { OUTSIDE_SUBSET = -1 };

/* A reason no family takes the call for, cuBLASLt's algorithms included. */
static void unroutable(gs_call_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(c, fmt, ap);
    va_end(ap);
    c->lt_algos_only = OUTSIDE_SUBSET;
}

/* A reason our kernels cannot take the call for that cuBLASLt's own
 * algorithms can: part of the FP8 subset (gs_call.h), the call still
 * described exactly by its class and its per-call pointers. */
static void fp8_subset(gs_call_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    append(c, fmt, ap);
    va_end(ap);
}

/* An FP8 call outside the subset that no listed reason excludes: said only
 * under tuning (the list stays what it was), the first one kept. */
static void not_for_algos(gs_call_t *c, const char *why)
{
    if (!c->lt_algos_why)
        c->lt_algos_why = why;
}

/* A descriptor attribute of exactly `size` bytes; -1 if the library does not
 * know it (older cuBLASLt) or answers with another size. */
static int desc_get(const gs_lt_getters_t *r, cublasLtMatmulDesc_t d,
                    cublasLtMatmulDescAttributes_t attr, void *out, size_t size)
{
    size_t written = 0;
    memset(out, 0, size);
    if (r->desc_get(d, attr, out, size, &written) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return written == size ? 0 : -1;
}

static int layout_get(const gs_lt_getters_t *r, cublasLtMatrixLayout_t l,
                      cublasLtMatrixLayoutAttribute_t attr, void *out, size_t size)
{
    size_t written = 0;
    memset(out, 0, size);
    if (r->layout_get(l, attr, out, size, &written) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return written == size ? 0 : -1;
}

typedef struct layout {
    uint32_t type;
    uint64_t rows, cols;
    int64_t ld, stride;
    int32_t batch;
} layout_t;

/* A column-major, strided-batch, real layout; else a reason. */
static const char *read_layout(const gs_lt_getters_t *r, cublasLtMatrixLayout_t l, layout_t *o)
{
    int32_t order = 0;
    int64_t plane = 0;
    uint32_t mode = 0;
    if (!l)
        return "NULL layout";
    if (layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &o->type, sizeof o->type) ||
        layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_ROWS, &o->rows, sizeof o->rows) ||
        layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_COLS, &o->cols, sizeof o->cols) ||
        layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_LD, &o->ld, sizeof o->ld) ||
        layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &o->batch, sizeof o->batch) ||
        layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &o->stride,
                   sizeof o->stride) ||
        layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order))
        return "layout attributes unreadable";
    if (order != CUBLASLT_ORDER_COL)
        return "non-column-major layout";
    /* absent in older libraries, where they cannot have been set */
    if (!layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &plane, sizeof plane) && plane)
        return "planar-complex layout";
    if (!layout_get(r, l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof mode) && mode)
        return "pointer-array batch layout";
    if (o->rows > INT32_MAX || o->cols > INT32_MAX || o->batch < 1 || o->ld < 1 ||
        (uint64_t)o->ld < o->rows)
        return "layout sizes cuBLASLt must judge";
    return NULL;
}

/* A matrix's scale: its pointer and mode attributes, where the class
 * keeps it, and its letter for the log. */
typedef struct scale_attrs {
    cublasLtMatmulDescAttributes_t pointer, mode;
    int shift; /* GS_LT_SCALE_* */
    char name;
} scale_attrs_t;

static const scale_attrs_t scale_attrs[] = {
    {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, GS_LT_SCALE_A, 'A'},
    {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, GS_LT_SCALE_B, 'B'},
    {CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_C_SCALE_MODE, GS_LT_SCALE_C, 'C'},
    {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_MODE, GS_LT_SCALE_D, 'D'},
};

/* A pointer attribute; NULL where the library does not know it (older
 * cuBLASLt), where it cannot have been set. */
static const void *desc_pointer(const gs_lt_getters_t *r, cublasLtMatmulDesc_t d,
                                cublasLtMatmulDescAttributes_t attr)
{
    const void *p = NULL;
    return desc_get(r, d, attr, &p, sizeof p) ? NULL : p;
}

static int is_fp8(uint32_t cuda_type)
{
    const gs_dtype_t t = gs_dtype_from_cuda((int)cuda_type);
    return t == GS_DT_E4M3 || t == GS_DT_E5M2;
}

/* The A and B scale modes cuBLASLt's algorithms are tuned with: per
 * tensor and per row / column (rowwise), fp32 factors. */
static int subset_scale(gs_scale_mode_t m)
{
    return m == GS_SCALE_NONE || m == GS_SCALE_SCALAR_32F || m == GS_SCALE_OUTER_VEC_32F;
}

/* The scaling contract into c->lt_scales and c->lt_flags, each part of it
 * a reason: scales (a mode is read only with its pointer set, as cuBLASLt
 * applies none without one; A's and B's pointers kept for the call), the
 * outputs only FP8 writes, and fast accumulation where it means something
 * (FP8 operands: cuBLASLt ignores it on others, so such calls keep their
 * class). */
static void read_scaling(const gs_lt_getters_t *r, const gs_lt_args_t *a, int fp8, gs_call_t *c)
{
    char ab[64] = "";
    size_t n = 0;
    for (size_t i = 0; i < sizeof scale_attrs / sizeof scale_attrs[0]; ++i) {
        const scale_attrs_t *x = &scale_attrs[i];
        const void *ptr = desc_pointer(r, a->desc, x->pointer);
        if (!ptr)
            continue;
        int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F; /* the default; absent before 12.8 */
        desc_get(r, a->desc, x->mode, &mode, sizeof mode);
        const gs_scale_mode_t m = gs_scale_mode_from_lt(mode);
        c->lt_scales |= (unsigned)m << x->shift;
        if ((uintptr_t)ptr % 16u) {
            c->lt_flags |= GS_LT_SCALE_UNALIGNED;
            unroutable(c, "%c scale pointer not 16-byte aligned", x->name);
        }
        if (x->shift == GS_LT_SCALE_A)
            c->scale_a = ptr;
        if (x->shift == GS_LT_SCALE_B)
            c->scale_b = ptr;
        if (x->shift == GS_LT_SCALE_A || x->shift == GS_LT_SCALE_B) /* C and D: below */
            n += (size_t)snprintf(ab + n, sizeof ab - n, " %c=%s", x->name, gs_scale_mode_name(m));
    }
    const gs_scale_mode_t ma = gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_A),
                          mb = gs_lt_scale_of(c->lt_scales, GS_LT_SCALE_B);
    if (ab[0] && fp8 && subset_scale(ma) && subset_scale(mb))
        fp8_subset(c, "scale modes%s", ab);
    else if (ab[0])
        unroutable(c, "scale modes%s", ab);
    for (int shift = GS_LT_SCALE_C; shift <= GS_LT_SCALE_D; shift += 4) {
        const gs_scale_mode_t m = gs_lt_scale_of(c->lt_scales, shift);
        const char name = shift == GS_LT_SCALE_C ? 'C' : 'D';
        if (m == GS_SCALE_SCALAR_32F)
            unroutable(c, "%c scale set", name);
        else if (m != GS_SCALE_NONE)
            unroutable(c, "%c scale set (%s)", name, gs_scale_mode_name(m));
    }
    if (desc_pointer(r, a->desc, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER))
        unroutable(c, "D out scale set");
    if (desc_pointer(r, a->desc, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER)) {
        c->lt_flags |= GS_LT_AMAX_D;
        unroutable(c, "AMAX_D set");
    }
    if (desc_pointer(r, a->desc, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR))
        unroutable(c, "emulation descriptor set");
    int8_t fast = 0;
    if (fp8 && !desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast) && fast) {
        c->lt_flags |= GS_LT_FAST_ACCUM;
        fp8_subset(c, "fast accumulation on");
    }
}

/* A host scalar, which need not be aligned to its type. */
static float host_float(const void *p)
{
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

static int same_layout(const layout_t *x, const layout_t *y)
{
    return x->type == y->type && x->rows == y->rows && x->cols == y->cols && x->ld == y->ld &&
           x->batch == y->batch && (x->batch == 1 || x->stride == y->stride);
}

/* The FP8 subset's conditions that no listed reason covers (each one a
 * call cuBLASLt's algorithms refuse). A C apart from D is not one of them:
 * with beta known to be 0 on the host it is never read, and the family
 * computes in place on D (torch._scaled_mm passes its A as that C); with
 * any other beta the list already says "C != D with beta != 0". */
static void fp8_outside(gs_call_t *c, const layout_t *la, const layout_t *lb,
                        const layout_t *ld)
{
    const gs_dtype_t at = gs_dtype_from_cuda((int)la->type), bt = gs_dtype_from_cuda((int)lb->type),
                     dt = gs_dtype_from_cuda((int)ld->type);
    if (at == GS_DT_E5M2 && bt == GS_DT_E5M2)
        not_for_algos(c, "e5m2 x e5m2");
    if (dt != GS_DT_BF16 && dt != GS_DT_F16 && dt != GS_DT_F32)
        not_for_algos(c, "D neither bf16, fp16 nor fp32");
    if (c->compute_type != CUBLAS_COMPUTE_32F)
        not_for_algos(c, "compute type not 32F");
}

static void describe(const gs_lt_getters_t *r, const gs_lt_args_t *a, gs_call_t *c);

void gs_lt_describe(const gs_lt_getters_t *r, const gs_lt_args_t *a, gs_call_t *c)
{
    memset(c, 0, sizeof *c);
    describe(r, a, c);
    const int fp8 = gs_dtype_is_fp8(gs_dtype_from_cuda(c->atype)) ||
                    gs_dtype_is_fp8(gs_dtype_from_cuda(c->btype));
    c->lt_algos_only = fp8 && c->lt_algos_only != OUTSIDE_SUBSET && !c->lt_algos_why;
    if (!fp8)
        c->lt_algos_why = NULL;
}

/* gs_lt_describe's reading; c zeroed. */
static void describe(const gs_lt_getters_t *r, const gs_lt_args_t *a, gs_call_t *c)
{
    c->entry = GS_EP_LT_MATMUL;
    c->lt = a;
    c->lt_stream = (void *)a->stream;
    c->alpha = a->alpha;
    c->beta = a->beta;
    c->A = a->A;
    c->B = a->B;
    c->C = a->D; /* computed in place on D: C is read only when it is D */
    c->algo = -1;
    c->batch = 1;

    /* What stops the reading (the descriptors cannot be read, or do not
     * describe one product) is the only reason given; past that, every
     * reason that applies, in the order below. */
    if (!r->desc_get || !r->layout_get)
        return unroutable(c, "cuBLASLt attribute getters missing");
    if (!a->desc || !a->alpha || !a->beta)
        return unroutable(c, "NULL descriptor or scalar: cuBLASLt answers");

    int32_t compute = 0, scale = 0, pmode = 0, ta = 0, tb = 0, tc = 0, bias_type = -1;
    uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    int64_t bias_stride = 0;
    const void *bias = NULL;
    if (desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
        desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb))
        return unroutable(c, "matmul descriptor unreadable");
    layout_t la, lb, lc, ld;
    const char *why;
    /* C's layout read only when it is not D's handle (nine getter calls
     * into cuBLASLt a layout: most of a forwarded call's host cost is this
     * reading, and PyTorch's bias GEMMs pass one handle for both) */
    const int c_is_d = a->Cdesc == a->Ddesc;
    if ((why = read_layout(r, a->Adesc, &la)) || (why = read_layout(r, a->Bdesc, &lb)) ||
        (why = read_layout(r, a->Ddesc, &ld)) ||
        (!c_is_d && (why = read_layout(r, a->Cdesc, &lc))))
        return unroutable(c, "%s", why);
    if (c_is_d)
        lc = ld;
    /* op(A) is m x k, op(B) k x n, D m x n; C and T alike for real types */
    int opa = ta != CUBLAS_OP_N, opb = tb != CUBLAS_OP_N;
    c->transa = opa ? CUBLAS_OP_T : CUBLAS_OP_N;
    c->transb = opb ? CUBLAS_OP_T : CUBLAS_OP_N;
    c->m = (int64_t)ld.rows;
    c->n = (int64_t)ld.cols;
    c->k = (int64_t)(opa ? la.rows : la.cols);
    if ((uint64_t)c->m != (opa ? la.cols : la.rows) || (uint64_t)c->k != (opb ? lb.cols : lb.rows) ||
        (uint64_t)c->n != (opb ? lb.rows : lb.cols) || lc.rows != ld.rows || lc.cols != ld.cols)
        return unroutable(c, "sizes disagree: cuBLASLt answers");
    if (desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute) ||
        desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale) ||
        desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pmode, sizeof pmode) ||
        desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_TRANSC, &tc, sizeof tc) ||
        desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue))
        return unroutable(c, "matmul descriptor unreadable");
    c->atype = (int)la.type;
    c->btype = (int)lb.type;
    c->ctype = (int)ld.type;
    c->compute_type = compute;
    c->batch = ld.batch;
    c->lda = la.ld;
    c->ldb = lb.ld;
    c->ldc = ld.ld;
    c->stride_a = la.stride;
    c->stride_b = lb.stride;
    c->stride_c = ld.stride;
    c->lt_scalars_on_device = pmode == CUBLASLT_POINTER_MODE_DEVICE;

    if (la.batch != ld.batch || lb.batch != ld.batch || lc.batch != ld.batch)
        unroutable(c, "batch counts differ");
    if (c->m == 0 || c->n == 0 || c->k == 0)
        unroutable(c, "empty product: cuBLASLt answers");
    const int fp8 = is_fp8(la.type) || is_fp8(lb.type);
    if (fp8)
        fp8_subset(c, "fp8 operands");
    if (la.type != lb.type && is_fp8(la.type) && is_fp8(lb.type))
        fp8_subset(c, "A and B types differ");
    else if (la.type != lb.type)
        unroutable(c, "A and B types differ");
    if (lc.type != ld.type) {
        c->lt_flags |= GS_LT_C_TYPE_DIFFERS |
                       (unsigned)gs_dtype_from_cuda((int)lc.type) << GS_LT_C_TYPE_SHIFT;
        unroutable(c, "C and D types differ");
    }
    read_scaling(r, a, fp8, c);
    if (epilogue != CUBLASLT_EPILOGUE_DEFAULT && epilogue != CUBLASLT_EPILOGUE_BIAS)
        unroutable(c, "epilogue %u not routed", (unsigned)epilogue);
    if (pmode != CUBLASLT_POINTER_MODE_HOST && pmode != CUBLASLT_POINTER_MODE_DEVICE)
        unroutable(c, "vector pointer mode not routed");
    if (tc != CUBLAS_OP_N)
        unroutable(c, "transc set");
    if (scale != CUDA_R_32F)
        unroutable(c, "scale type not fp32");
    if (epilogue == CUBLASLT_EPILOGUE_BIAS) {
        if (desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) || !bias)
            unroutable(c, "BIAS epilogue without a bias: cuBLASLt answers");
        desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride,
                 sizeof bias_stride);
        if (desc_get(r, a->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                     sizeof bias_type))
            bias_type = -1;
    }
    if (bias) {
        if (c->batch > 1 && bias_stride != 0)
            unroutable(c, "per-batch bias not routed");
        c->bias = bias;
        c->bias_type = bias_type == -1 ? (int)ld.type : bias_type;
        /* the class would record another type as no bias at all
         * (GS_DT_OTHER), and a kernel read it as fp32 */
        const gs_dtype_t bt = gs_dtype_from_cuda(c->bias_type);
        if (bt != GS_DT_F32 && bt != GS_DT_F16 && bt != GS_DT_BF16)
            unroutable(c, "bias type not routed");
    }
    /* The kernels compute in place. C == D must describe the same matrix;
     * a separate C is fine only when it is never read (beta == 0, known on
     * the host). */
    if (a->C == a->D) {
        if (!same_layout(&lc, &ld))
            unroutable(c, "C == D with different layouts");
    } else if (pmode != CUBLASLT_POINTER_MODE_HOST || scale != CUDA_R_32F ||
               host_float(a->beta) != 0.0f) {
        /* beta is host memory only in host pointer mode */
        unroutable(c, "C != D with beta != 0");
    }
    /* cuBLASLt computes alpha times the sum even at alpha == 0, so a NaN or
     * Inf operand reaches D (H200, cuBLAS 13.1; tests/gpu/test_lt.c), where
     * cuBLAS's BLAS GEMMs read neither A nor B. The skinny and FP8 kernels
     * follow the entry point (skinny_params), not every family does; a host
     * zero is a rare call, and cuBLASLt answers it exactly. Device scalars
     * are not read here: the skinny kernels follow the entry point, the
     * SIMT SGEMM refuses device scalars on Lt calls. A scalar is read only
     * as the fp32 it is under an fp32 scale type. */
    if (!fp8 && pmode == CUBLASLT_POINTER_MODE_HOST && scale == CUDA_R_32F &&
        host_float(a->alpha) == 0.0f)
        unroutable(c, "alpha 0: cuBLASLt computes 0 x the sum");
    if (fp8)
        fp8_outside(c, &la, &lb, &ld);
}
