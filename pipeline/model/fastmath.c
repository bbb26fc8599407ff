/* pipeline/model/fastmath.c — array forms of the vectorised exp and GELU (see fastmath.h). */
#include "pipeline/model/fastmath.h"

void kc_vexpf(float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) x[i] = kc_expf(x[i]);
}

void kc_vgelu(float *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) x[i] = kc_gelu(x[i]);
}
