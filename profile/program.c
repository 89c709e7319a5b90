/*
 * Is this the same program?  Fusion and evaluation refuse runs of
 * different programs; a program copied to another path (staged to a
 * node's local disk, a second checkout built alike) is still the same
 * one when its file name and GNU build-id agree: construct identities are
 * made of exactly those (docs/tool.md, "Construct identity").
 */
#include <string.h>

#include "ompfuse/profile.h"

const char *ompf_program_build_id(const ompf_profile_t *p)
{
    const char *prog = p ? ompf_meta_get(p, "program") : NULL;
    if (!prog || !*prog)
        return "";
    size_t n = ompf_construct_count(p);
    for (size_t i = 0; i < n; i++) {
        const ompf_construct_t *c = ompf_construct_get(p, (uint32_t)i);
        if (c && c->module && c->build_id && *c->build_id && !strcmp(c->module, prog))
            return c->build_id;
    }
    return "";
}

static const char *base(const char *s, const char *end)
{
    const char *b = s;
    for (const char *q = s; q < end; q++)
        if (*q == '/')
            b = q + 1;
    return b;
}

/* argv (joined by \x1f) alike once argv[0] is cut to its file name */
static int same_args(const char *a, const char *b)
{
    if (!a || !b)
        return !a && !b;
    const char *ea = strchr(a, '\x1f'), *eb = strchr(b, '\x1f');
    if (!ea)
        ea = a + strlen(a);
    if (!eb)
        eb = b + strlen(b);
    const char *ba = base(a, ea), *bb = base(b, eb);
    return (size_t)(ea - ba) == (size_t)(eb - bb) && !memcmp(ba, bb, (size_t)(ea - ba)) &&
           !strcmp(ea, eb);
}

int ompf_program_moved(const char *prog_a, const char *argv_a, const char *bid_a,
                       const char *prog_b, const char *argv_b, const char *bid_b)
{
    if (!prog_a || !prog_b || !*prog_a || !*prog_b || !strcmp(prog_a, prog_b))
        return 0;
    if (!bid_a || !bid_b || !*bid_a || strcmp(bid_a, bid_b))
        return 0;
    const char *na = base(prog_a, prog_a + strlen(prog_a));
    const char *nb = base(prog_b, prog_b + strlen(prog_b));
    return !strcmp(na, nb) && same_args(argv_a, argv_b);
}
