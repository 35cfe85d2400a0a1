/* refine_methods.c — the refinement's methods as a table: each with its name and its joint step.
 * A new method is one entry here (and its step); the CLI's --method, --help and summary.json read
 * it. */
#include "refine_internal.h"

/* Indexed by enum jsmf_refine_method. */
static const refine_method methods[] = {
    [JSMF_REFINE_EM] = {.name = "em", .title = "MAP-EM for LDA over the documents",
                        .joint = refine_step_em},
    /* the default: it does not overfit short documents as EM does
     * (tools/bench/heldout-results.md) */
    [JSMF_REFINE_CVB0] = {.name = "cvb0", .title = "synchronous CVB0 for LDA over the documents",
                          .joint = refine_step_cvb0, .needs_totals = 1},
};

const refine_method *refine_method_get(int v)
{
    return v >= 0 && v < (int)(sizeof methods / sizeof methods[0]) ? &methods[v] : NULL;
}

const char *jsmf_refine_method_name(int v)
{
    const refine_method *m = refine_method_get(v);
    return m ? m->name : NULL;
}
