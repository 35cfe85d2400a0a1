/* fit_methods.c — the fit's choices as tables: every rectification, anchor and recovery method
 * with its name, defaults, rules and functions, and the representations of the rectified C. A
 * new method is one entry here (and its functions); the CLI's choices, --help, summary.json and
 * the rules of fit.c all read these. */
#include <stdio.h>
#include <string.h>

#include "fit_internal.h"

/* Indexed by enum jsmf_rectify; a method without an enum value is simply appended. */
static const fit_rectify_method rectify_methods[] = {
    [JSMF_RECTIFY_AP] = {.name = "ap", .title = "alternating projection", .default_iters = 15,
                         .anchor_df_divisor = 2, .level_rectify = JSMF_RECTIFY_AP,
                         .a_auto = JSMF_A_DIAG, .dense = fit_rectify_dense_ap,
                         .stream = fit_rectify_stream},
    /* two eigenproblems per cycle on the N x N iterate: dense only */
    [JSMF_RECTIFY_DR] = {.name = "dr", .title = "Douglas-Rachford", .default_iters = 15,
                         .anchor_df_divisor = 2, .level_rectify = JSMF_RECTIFY_AP,
                         .a_auto = JSMF_A_DIAG, .dense = fit_rectify_dense_dr},
    /* the Arora et al. 2013 baseline: C as it is, A by the pseudo-inverse */
    [JSMF_RECTIFY_NONE] = {.name = "none", .title = "no rectification", .default_iters = 15,
                           .anchor_df_divisor = 2, .level_rectify = JSMF_RECTIFY_NONE,
                           .a_auto = JSMF_A_PINV, .dense = fit_rectify_dense_none,
                           .stream = fit_rectify_stream_none},
    /* never N x N: a cap on its steps (it stops when converged), and a lower anchor threshold
     * (tools/bench/fit-results.md: its rows of rare words do not win the pivots) */
    [JSMF_RECTIFY_COMPRESSED] = {.name = "compressed", .title = "the compressed iterate",
                                 .default_iters = 100, .anchor_df_divisor = 8,
                                 .level_rectify = JSMF_RECTIFY_AP, .a_auto = JSMF_A_DIAG,
                                 .factored = 1, .stream = fit_rectify_compressed},
};

static const fit_anchors_method anchors_methods[] = {
    [JSMF_ANCHORS_QR] = {.name = "qr", .row_at_a_time = 1, .find = fit_anchors_find_qr},
    [JSMF_ANCHORS_FAST] = {.name = "fast", .find = fit_anchors_find_fast},
};

static const fit_recover_method recover_methods[] = {
    [JSMF_RECOVER_ADMM] = {.name = "admm", .solve = fit_snls_admm,
                           .solve_many = fit_snls_admm_many},
    [JSMF_RECOVER_EXPGRAD] = {.name = "expgrad", .solve = fit_snls_expgrad},
    [JSMF_RECOVER_KL] = {.name = "kl", .solve_row = fit_snls_kl},
    [JSMF_RECOVER_ACTIVESET] = {.name = "activeset", .solve = fit_snls_activeset},
};

/* The representations R can be re-expressed in after its rectification (JSMF_TEST_FIT_REPR:
 * tests run the steps after it through one); a representation is one entry here (and its file). */
static const fit_repr reprs[] = {
    {.name = "dense", .adopt = fit_rect_dense_as},
};

#define COUNT(t) ((int)(sizeof(t) / sizeof((t)[0])))

int fit_repr_adopt(fit_mat *R, const char *name)
{
    char list[256] = "";
    size_t used = 0;
    for (int v = 0; v < COUNT(reprs); v++) {
        if (!strcmp(reprs[v].name, name))
            return reprs[v].adopt(R);
        int len = snprintf(list + used, sizeof list - used, "%s%s", v ? ", " : "", reprs[v].name);
        used += len > 0 && (size_t)len < sizeof list - used ? (size_t)len : 0;
    }
    return jsmf_error(JSMF_EINVAL, "fit: no representation '%s' of the rectified C (%s)", name,
                      list);
}

const fit_rectify_method *fit_rectify_method_get(int v)
{
    return v >= 0 && v < COUNT(rectify_methods) ? &rectify_methods[v] : NULL;
}

const fit_anchors_method *fit_anchors_method_get(int v)
{
    return v >= 0 && v < COUNT(anchors_methods) ? &anchors_methods[v] : NULL;
}

const fit_recover_method *fit_recover_method_get(int v)
{
    return v >= 0 && v < COUNT(recover_methods) ? &recover_methods[v] : NULL;
}

const char *jsmf_fit_rectify_name(int v)
{
    const fit_rectify_method *m = fit_rectify_method_get(v);
    return m ? m->name : NULL;
}

const char *jsmf_fit_anchors_name(int v)
{
    const fit_anchors_method *m = fit_anchors_method_get(v);
    return m ? m->name : NULL;
}

const char *jsmf_fit_recover_name(int v)
{
    const fit_recover_method *m = fit_recover_method_get(v);
    return m ? m->name : NULL;
}
