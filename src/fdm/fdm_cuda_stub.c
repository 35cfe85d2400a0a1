/* fdm_cuda_stub.c — the CUDA entry points of FDM when jsmf is built without CUDA: each answers
 * "not compiled in", so the CPU back end and --device auto work unchanged. */
#include "fdm_internal.h"

#ifndef JSMF_WITH_CUDA
static int not_compiled(void)
{
    return jsmf_error(JSMF_ENOTSUP, "the CUDA back end is not compiled in (build with nvcc "
                      "present, or make CUDA=yes)");
}

int jsmf_fdm_cuda_probe(char *name, size_t len)
{
    if (name && len)
        name[0] = 0;
    return not_compiled();
}

int fdm_cuda_backend_create(const fdm_setup *setup, fdm_state *st, fdm_backend *out)
{
    (void)setup, (void)st, (void)out;
    return not_compiled();
}

int jsmf_fdm_loss_grad_cuda(uint32_t n, uint32_t k, const double *wmu, const double *walpha,
                            const uint32_t *u, const uint32_t *v, uint32_t count, double *loss,
                            double *gmu, double *galpha)
{
    (void)n, (void)k, (void)wmu, (void)walpha, (void)u, (void)v, (void)count, (void)loss;
    (void)gmu, (void)galpha;
    return not_compiled();
}
#endif
