/* The in-memory profile: metadata, events, constructs, XUs, threads,
 * provenance.  The label trie lives in label.c, names of enums in names.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profile_internal.h"

/* ---- small helpers ------------------------------------------------------ */

char *ompf__strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void ompf_give_back(const void *base, size_t *gone, size_t upto)
{
    if (!base || upto < *gone + ((size_t)4 << 20))
        return; /* before sysconf: loops call this often */
    long pg = sysconf(_SC_PAGESIZE); /* per call: profiles may be read in threads */
    size_t page = pg > 0 ? (size_t)pg : 4096;
    uintptr_t b = (uintptr_t)base, lo = b + *gone, hi = b + upto;
    lo = (lo + page - 1) & ~(uintptr_t)(page - 1);
    hi &= ~(uintptr_t)(page - 1); /* the page holding upto may be in use */
    if (!base || hi < lo + ((uintptr_t)4 << 20))
        return; /* a call per 4 MiB, not per chunk or XU */
    (void)madvise((void *)lo, hi - lo, MADV_DONTNEED); /* advice: may fail */
    *gone = hi - b;
}

/* Grows *arr (elements of size elem) so that it holds at least need. */
int ompf__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    /* double (amortised O(1) per element added), or exactly need when that
     * is more: a reader reserving a file's count gets no unused tail */
    size_t n = *cap ? *cap : 16;
    if (n > SIZE_MAX / 2)
        return OMPF_ENOMEM;
    n = need > 2 * n ? need : 2 * n;
    if (n > SIZE_MAX / elem)
        return OMPF_ENOMEM;
    void *p = realloc(*arr, n * elem);
    if (!p)
        return OMPF_ENOMEM;
    *arr = p;
    *cap = n;
    return 0;
}

const char *ompf_strerror(int code)
{
    switch (code) {
    case OMPF_OK: return "success";
    case OMPF_EINVAL: return "invalid argument";
    case OMPF_ENOMEM: return "out of memory";
    case OMPF_EIO: return "input/output error";
    case OMPF_EFORMAT: return "malformed profile";
    case OMPF_EVERSION: return "profile written by a newer format version";
    case OMPF_ETRUNC: return "profile truncated";
    case OMPF_ECHECKSUM: return "checksum mismatch";
    case OMPF_ERANGE: return "value or reference out of range";
    case OMPF_ENOTFOUND: return "not found";
    case OMPF_EMISMATCH: return "inputs do not match";
    case OMPF_EUNSUPP: return "not supported on this machine";
    case OMPF_EPERM: return "permission denied";
    case OMPF_EUSAGE: return "usage error";
    default: return "unknown error";
    }
}

int ompf_error_set(ompf_error_t *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

double ompf_missing(void)
{
    return nan("");
}

int ompf_is_missing(double v)
{
    return isnan(v);
}

/* ---- create / destroy --------------------------------------------------- */

int ompf_profile_create(ompf_profile_t **out)
{
    if (!out)
        return OMPF_EINVAL;
    ompf_profile_t *p = calloc(1, sizeof *p);
    if (!p)
        return OMPF_ENOMEM;
    /* The root node of the label trie always exists. */
    int rc = ompf__label_init(p);
    if (rc) {
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

void ompf__free_event(ompf_event_t *e)
{
    free((char *)e->name);
    free((char *)e->reason);
}

static void free_construct(ompf_construct_t *c)
{
    free((char *)c->module);
    free((char *)c->build_id);
    free((char *)c->file);
    free((char *)c->function);
    free((char *)c->name);
}

void ompf_profile_destroy(ompf_profile_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_meta; i++) {
        free(p->meta_key[i]);
        free(p->meta_val[i]);
    }
    free(p->meta_key);
    free(p->meta_val);
    for (size_t i = 0; i < p->n_ev; i++)
        ompf__free_event(&p->ev[i]);
    free(p->ev);
    free(p->ev_hash);
    for (size_t i = 0; i < p->n_con; i++)
        free_construct(&p->con[i]);
    free(p->con);
    ompf__label_free(p);
    free(p->xu);
    ompf__lean_free(p);
    free(p->part);
    free(p->part_at);
    free(p->values);
    for (size_t i = 0; i < p->n_th; i++)
        free(p->th[i].total); /* one block holds all four arrays */
    free(p->th);
    for (size_t i = 0; i < p->n_src; i++)
        free((char *)p->src[i].path);
    free(p->src);
    free(p->prov);
    ompf__exact_free(p);
    free(p);
}

/* ---- metadata ----------------------------------------------------------- */

int ompf_meta_set(ompf_profile_t *p, const char *key, const char *value)
{
    if (!p || !key || !*key || !value)
        return OMPF_EINVAL;
    for (size_t i = 0; i < p->n_meta; i++) {
        if (!strcmp(p->meta_key[i], key)) {
            char *v = ompf__strdup(value);
            if (!v)
                return OMPF_ENOMEM;
            free(p->meta_val[i]);
            p->meta_val[i] = v;
            return 0;
        }
    }
    size_t cap = p->cap_meta;
    if (ompf__grow((void **)&p->meta_key, &cap, p->n_meta + 1, sizeof(char *)))
        return OMPF_ENOMEM;
    cap = p->cap_meta;
    if (ompf__grow((void **)&p->meta_val, &cap, p->n_meta + 1, sizeof(char *)))
        return OMPF_ENOMEM;
    p->cap_meta = cap;
    char *k = ompf__strdup(key), *v = ompf__strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return OMPF_ENOMEM;
    }
    p->meta_key[p->n_meta] = k;
    p->meta_val[p->n_meta] = v;
    p->n_meta++;
    return 0;
}

const char *ompf_meta_get(const ompf_profile_t *p, const char *key)
{
    if (!p || !key)
        return NULL;
    for (size_t i = 0; i < p->n_meta; i++)
        if (!strcmp(p->meta_key[i], key))
            return p->meta_val[i];
    return NULL;
}

size_t ompf_meta_count(const ompf_profile_t *p)
{
    return p ? p->n_meta : 0;
}

int ompf_meta_at(const ompf_profile_t *p, size_t i, const char **key,
                 const char **value)
{
    if (!p || i >= p->n_meta)
        return OMPF_ERANGE;
    if (key)
        *key = p->meta_key[i];
    if (value)
        *value = p->meta_val[i];
    return 0;
}

uint64_t ompf_profile_run_id(const ompf_profile_t *p)
{
    const char *s = ompf_meta_get(p, "run_id");
    if (!s)
        return 0;
    return strtoull(s, NULL, 16);
}

int ompf_profile_set_run_id(ompf_profile_t *p, uint64_t id)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)id);
    return ompf_meta_set(p, "run_id", buf);
}

/* ---- constructs --------------------------------------------------------- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The construct key (names.c: one format for every command). */
static char *derive_name(const ompf_construct_t *c)
{
    char buf[4096];
    ompf_construct_format(c, buf, sizeof buf);
    return ompf__strdup(buf);
}

int ompf_construct_add(ompf_profile_t *p, const ompf_construct_t *c,
                       uint32_t *idx)
{
    if (!p || !c || c->kind < 0 || c->kind >= OMPF_CK_COUNT)
        return OMPF_EINVAL;
    if (p->n_con >= UINT32_MAX - 1)
        return OMPF_ERANGE;
    if (ompf__grow((void **)&p->con, &p->cap_con, p->n_con + 1, sizeof *p->con))
        return OMPF_ENOMEM;
    ompf_construct_t n = *c;
    n.module = ompf__strdup(c->module ? c->module : "");
    n.build_id = ompf__strdup(c->build_id ? c->build_id : "");
    n.file = ompf__strdup(c->file);
    n.function = ompf__strdup(c->function);
    n.name = (c->name && *c->name) ? ompf__strdup(c->name) : derive_name(c);
    if (!n.module || !n.build_id || !n.name || (c->file && !n.file) ||
        (c->function && !n.function)) {
        free_construct(&n);
        return OMPF_ENOMEM;
    }
    p->con[p->n_con] = n;
    if (idx)
        *idx = (uint32_t)p->n_con;
    p->n_con++;
    return 0;
}

size_t ompf_construct_count(const ompf_profile_t *p)
{
    return p ? p->n_con : 0;
}

const ompf_construct_t *ompf_construct_get(const ompf_profile_t *p,
                                           uint32_t idx)
{
    return (p && idx < p->n_con) ? &p->con[idx] : NULL;
}

/* The identity that is equal across runs of one binary: the module's base
 * name (the path may differ between machines), its build-id and the
 * offset.  Imported constructs have neither module nor build-id: their
 * display name is their identity. */
static int key_of(const ompf_construct_t *c, char *buf, size_t len)
{
    int n;
    if ((!c->module || !*c->module) && (!c->build_id || !*c->build_id))
        n = snprintf(buf, len, "name:%s", c->name ? c->name : "");
    else
        n = snprintf(buf, len, "%s|%s|0x%llx",
                     c->module ? base_name(c->module) : "",
                     c->build_id ? c->build_id : "",
                     (unsigned long long)c->offset);
    return (n < 0 || (size_t)n >= len) ? OMPF_ERANGE : 0;
}

int ompf_construct_key(const ompf_profile_t *p, uint32_t idx, char *buf,
                       size_t len)
{
    if (!p || idx >= p->n_con || !buf)
        return OMPF_EINVAL;
    return key_of(&p->con[idx], buf, len);
}

int ompf_construct_find(const ompf_profile_t *p, const ompf_construct_t *key)
{
    if (!p || !key)
        return -1;
    char want[4200], have[4200];
    ompf_construct_t k = *key;
    char *derived = NULL;
    if (!k.name && (!k.module || !*k.module) && (!k.build_id || !*k.build_id)) {
        derived = derive_name(key);
        k.name = derived;
    }
    int rc = key_of(&k, want, sizeof want);
    free(derived);
    if (rc)
        return -1;
    for (size_t i = 0; i < p->n_con; i++)
        if (!key_of(&p->con[i], have, sizeof have) && !strcmp(want, have))
            return (int)i;
    return -1;
}

int ompf_construct_set_source(ompf_profile_t *p, uint32_t idx,
                              const char *file, int32_t line,
                              const char *function)
{
    if (!p || idx >= p->n_con)
        return OMPF_EINVAL;
    ompf_construct_t *c = &p->con[idx];
    char *f = ompf__strdup(file), *fn = ompf__strdup(function);
    if ((file && !f) || (function && !fn)) {
        free(f);
        free(fn);
        return OMPF_ENOMEM;
    }
    free((char *)c->file);
    free((char *)c->function);
    c->file = f;
    c->function = fn;
    c->line = line;
    /* The display name of a construct that has an identity of its own
     * follows its resolution; an imported construct keeps its name,
     * which is its identity. */
    if ((c->module && *c->module) || (c->build_id && *c->build_id)) {
        char *n = derive_name(c);
        if (!n)
            return OMPF_ENOMEM;
        free((char *)c->name);
        c->name = n;
    }
    return 0;
}

/* ---- XUs ---------------------------------------------------------------- */

int ompf_xu_reserve(ompf_profile_t *p, size_t n)
{
    /* nothing is added to a packed profile, nor to one without types */
    if (!p || (p->pk && !p->pk_open) || (p->lean & OMPF_LEAN_NO_TYPE))
        return OMPF_EINVAL;
    size_t old = p->cap_xu;
    if (p->lean ? ompf__lean_reserve(p, n)
                : ompf__grow((void **)&p->xu, &p->cap_xu, n, sizeof *p->xu))
        return OMPF_ENOMEM;
    /* Value and provenance rows follow the XU capacity; if they cannot,
     * the capacity stays what they hold (ompf_xu_add trusts it). */
    n = p->cap_xu;
    if ((p->n_ev && (n > SIZE_MAX / p->n_ev ||
                     ompf__grow((void **)&p->values, &p->cap_val, n * p->n_ev,
                                sizeof *p->values))) ||
        (p->n_src && !p->lean &&
         (n > SIZE_MAX / p->n_src ||
          ompf__grow((void **)&p->prov, &p->cap_prov, n * p->n_src, sizeof *p->prov)))) {
        p->cap_xu = old;
        return OMPF_ENOMEM;
    }
    return 0;
}

int ompf_xu_add(ompf_profile_t *p, const ompf_xu_t *xu, const double *values)
{
    if (!p || !xu || (p->pk && !p->pk_open) || (p->lean & OMPF_LEAN_NO_TYPE))
        return OMPF_EINVAL;
    if (xu->type >= p->n_con ||
        xu->label >= (p->label_space ? p->label_space : p)->n_lab ||
        xu->kind >= OMPF_XU_KIND_COUNT ||
        (p->n_th && xu->thread >= p->n_th))
        return OMPF_ERANGE;
    size_t need = p->n_xu + 1;
    if (need > p->cap_xu && ompf_xu_reserve(p, need + need / 2))
        return OMPF_ENOMEM;
    if (p->pk_open && ompf__pack_add(p, p->n_xu, xu))
        return OMPF_ENOMEM;
    if (p->lean)
        ompf__lean_store(p, p->n_xu, xu);
    else
        p->xu[p->n_xu] = *xu;
    for (size_t e = 0; e < p->n_ev; e++)
        p->values[p->n_xu * p->n_ev + e] = values ? values[e] : OMPF_MISSING;
    for (size_t s = 0; s < p->n_src && !p->lean; s++)
        p->prov[p->n_xu * p->n_src + s] = OMPF_NONE64;
    p->n_xu++;
    return 0;
}

size_t ompf_xu_count(const ompf_profile_t *p)
{
    return p ? p->n_xu : 0;
}

const ompf_xu_t *ompf_xu_get(const ompf_profile_t *p, size_t i)
{
    return (p && i < p->n_xu && p->xu) ? &p->xu[i] : NULL;
}

double *ompf_xu_values(ompf_profile_t *p, size_t i)
{
    return (p && i < p->n_xu && p->n_ev) ? p->values + i * p->n_ev : NULL;
}

const double *ompf_xu_values_const(const ompf_profile_t *p, size_t i)
{
    return (p && i < p->n_xu && p->n_ev) ? p->values + i * p->n_ev : NULL;
}

/* ---- threads ------------------------------------------------------------ */

int ompf_thread_add(ompf_profile_t *p, int32_t os_tid, uint32_t *idx)
{
    if (!p)
        return OMPF_EINVAL;
    if (p->n_th >= UINT32_MAX - 1)
        return OMPF_ERANGE;
    if (ompf__grow((void **)&p->th, &p->cap_th, p->n_th + 1, sizeof *p->th))
        return OMPF_ENOMEM;
    size_t n = p->n_ev ? p->n_ev : 1;
    double *block = malloc(4 * n * sizeof *block);
    if (!block)
        return OMPF_ENOMEM;
    for (size_t i = 0; i < 4 * n; i++)
        block[i] = OMPF_MISSING;
    ompf_thread_t *t = &p->th[p->n_th];
    t->index = (uint32_t)p->n_th;
    t->os_tid = os_tid;
    t->total = block;
    t->gap = block + n;
    t->enabled_ns = block + 2 * n;
    t->running_ns = block + 3 * n;
    if (idx)
        *idx = t->index;
    p->n_th++;
    return 0;
}

size_t ompf_thread_count(const ompf_profile_t *p)
{
    return p ? p->n_th : 0;
}

ompf_thread_t *ompf_thread_get(ompf_profile_t *p, uint32_t idx)
{
    return (p && idx < p->n_th) ? &p->th[idx] : NULL;
}

const ompf_thread_t *ompf_thread_get_const(const ompf_profile_t *p,
                                           uint32_t idx)
{
    return (p && idx < p->n_th) ? &p->th[idx] : NULL;
}

/* ---- sources / provenance ----------------------------------------------- */

int ompf_source_add(ompf_profile_t *p, const ompf_source_t *s, uint32_t *idx)
{
    if (!p || !s)
        return OMPF_EINVAL;
    /* Provenance rows have one column per source: fixed before XUs. */
    if (p->n_xu)
        return OMPF_EINVAL;
    if (ompf__grow((void **)&p->src, &p->cap_src, p->n_src + 1, sizeof *p->src))
        return OMPF_ENOMEM;
    ompf_source_t n = *s;
    n.path = ompf__strdup(s->path ? s->path : "");
    if (!n.path)
        return OMPF_ENOMEM;
    p->src[p->n_src] = n;
    if (idx)
        *idx = (uint32_t)p->n_src;
    p->n_src++;
    return 0;
}

size_t ompf_source_count(const ompf_profile_t *p)
{
    return p ? p->n_src : 0;
}

const ompf_source_t *ompf_source_get(const ompf_profile_t *p, uint32_t idx)
{
    return (p && idx < p->n_src) ? &p->src[idx] : NULL;
}

uint64_t *ompf_xu_provenance(ompf_profile_t *p, size_t i)
{
    return (p && i < p->n_xu && p->n_src && p->prov) ? p->prov + i * p->n_src : NULL;
}

const uint64_t *ompf_xu_provenance_const(const ompf_profile_t *p, size_t i)
{
    return (p && i < p->n_xu && p->n_src && p->prov) ? p->prov + i * p->n_src : NULL;
}
