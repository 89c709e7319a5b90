/*
 * ompfuse profile data model.
 *
 * A profile is everything one execution recorded (or one fused result):
 * metadata, an event table, a construct table, a label trie, XU records with
 * one value per event, per-thread totals, and, for fused profiles, the
 * provenance of every XU.  This header is the in-memory model; file.h reads
 * and writes it, csv.h converts it.
 *
 * Conventions (libpfm4-like): functions return 0 or a negative OMPF_E* code;
 * ompf_strerror() names the code; functions that can fail for a reason worth
 * telling the user take an ompf_error_t that receives a full sentence.
 */
#ifndef OMPFUSE_PROFILE_H
#define OMPFUSE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OMPF_VERSION_STRING "0.1.0"

/* ---- errors ----------------------------------------------------------- */

enum {
    OMPF_OK = 0,
    OMPF_EINVAL = -1,    /* invalid argument */
    OMPF_ENOMEM = -2,    /* out of memory */
    OMPF_EIO = -3,       /* read/write/open failed */
    OMPF_EFORMAT = -4,   /* malformed file */
    OMPF_EVERSION = -5,  /* file from a newer format version */
    OMPF_ETRUNC = -6,    /* file cut short (salvaged part may be usable) */
    OMPF_ECHECKSUM = -7, /* chunk checksum mismatch */
    OMPF_ERANGE = -8,    /* out-of-range reference or absurd size */
    OMPF_ENOTFOUND = -9, /* no such event/construct/key */
    OMPF_EMISMATCH = -10,/* inputs that cannot be combined */
    OMPF_EUNSUPP = -11,  /* not supported on this machine */
    OMPF_EPERM = -12,    /* permission denied */
    OMPF_EUSAGE = -13,   /* command-line misuse */
};

const char *ompf_strerror(int code);

/* A detailed, user-facing error: names the file, the problem and a remedy. */
typedef struct ompf_error {
    int code;
    char msg[1024];
} ompf_error_t;

/* Sets err (if non-NULL) with a printf-style message; returns code. */
int ompf_error_set(ompf_error_t *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- values ----------------------------------------------------------- */

/* Event values are IEEE-754 doubles: integer counts are exact up to 2^53
 * (and counts up to 2^64-1 through the exact counts of ompf_xu_value_u64),
 * HEM estimates may be fractional or negative.  A missing value (not
 * measured, or HEM with no running time) is a dedicated quiet NaN; never 0. */
double ompf_missing(void);
int ompf_is_missing(double v);
#define OMPF_MISSING (ompf_missing())

#define OMPF_NONE32 UINT32_MAX /* "no index" for uint32_t references */
#define OMPF_NONE64 UINT64_MAX /* "no id" for uint64_t references */

/* ---- enumerations ----------------------------------------------------- */

typedef enum ompf_xu_kind {
    OMPF_XU_TASK = 0,           /* explicit task instance */
    OMPF_XU_LOOP_CHUNK = 1,     /* dynamic/guided/runtime loop chunk */
    OMPF_XU_STATIC_CHUNKS = 2,  /* a thread's chunk set of a static loop */
    OMPF_XU_TASKLOOP_CHUNK = 3, /* taskloop chunk task */
    OMPF_XU_SECTION = 4,        /* a section as the runtime reports it */
    OMPF_XU_OTHER = 5,
    OMPF_XU_KIND_COUNT
} ompf_xu_kind_t;

typedef enum ompf_construct_kind {
    OMPF_CK_UNKNOWN = 0,
    OMPF_CK_PARALLEL,
    OMPF_CK_TASK,
    OMPF_CK_LOOP,
    OMPF_CK_TASKLOOP,
    OMPF_CK_SECTIONS,
    OMPF_CK_SINGLE,
    OMPF_CK_MASKED,
    OMPF_CK_OTHER,
    OMPF_CK_COUNT
} ompf_construct_kind_t;

typedef enum ompf_event_status {
    OMPF_EV_COUNTED = 0,     /* counted for the whole run */
    OMPF_EV_FAILED = 1,      /* could not be opened: see reason; values missing */
    OMPF_EV_MULTIPLEXED = 2, /* time_running < time_enabled was seen */
    OMPF_EV_ESTIMATED = 3,   /* HEM estimate (scaled); may be missing per XU */
    OMPF_EV_STATUS_COUNT
} ompf_event_status_t;

/* Short lowercase names ("task", "loop-chunk", ...) and their inverse
 * (return -1 when unknown). */
const char *ompf_xu_kind_name(ompf_xu_kind_t k);
int ompf_xu_kind_parse(const char *s);
const char *ompf_construct_kind_name(ompf_construct_kind_t k);
/* The construct key, one name per construct in every output (docs/
 * format.md): "FILE:LINE FUNCTION" (or "FILE:LINE") when the line is
 * known, "FUNCTION (MODULE+0xOFFSET)" when only the function is, else
 * "MODULE+0xOFFSET" (MODULE: the module's base name).  Returns the length
 * snprintf would write. */
struct ompf_construct;
int ompf_construct_format(const struct ompf_construct *c, char *buf,
                          size_t len);
int ompf_construct_kind_parse(const char *s);
const char *ompf_event_status_name(ompf_event_status_t s);
int ompf_event_status_parse(const char *s);

/* ---- records ---------------------------------------------------------- */

/* An event: libpfm4 name plus the perf_event encoding used. */
typedef struct ompf_event {
    const char *name;   /* libpfm4 name, e.g. "perf::TASK-CLOCK" */
    uint32_t pe_type;   /* perf_event_attr.type */
    uint64_t config, config1, config2;
    uint32_t pe_flags;  /* OMPF_PEF_* */
    int32_t status;     /* ompf_event_status_t */
    const char *reason; /* why failed/multiplexed; may be NULL */
    int32_t source;     /* fused: index into sources of the run that
                           provided the values; -1 otherwise */
} ompf_event_t;

#define OMPF_PEF_EXCLUDE_USER 0x1u
#define OMPF_PEF_EXCLUDE_KERNEL 0x2u
#define OMPF_PEF_EXCLUDE_HV 0x4u

/* A construct: a pragma in the code, identified across runs by
 * module (path + build-id) and module-relative offset of codeptr_ra. */
typedef struct ompf_construct {
    const char *module;   /* path of the ELF module; "" when unknown */
    const char *build_id; /* hex GNU build-id; "" when unknown */
    uint64_t offset;      /* codeptr_ra - module load base */
    int32_t kind;         /* ompf_construct_kind_t */
    const char *file;     /* source file, NULL until resolved */
    int32_t line;         /* 0 until resolved */
    const char *function; /* NULL until resolved */
    const char *name;     /* stable display identity used as XU "type" in
                             CSV: "file:line" if resolved, else
                             "module+0xoffset"; never NULL after add */
} ompf_construct_t;

/* An execution unit. Times are ns relative to the run's start. */
typedef struct ompf_xu {
    uint64_t id;          /* unique within the profile */
    uint32_t type;        /* index into the construct table */
    uint32_t label;       /* index of its node in the label trie */
    uint32_t thread;      /* index into the thread table (OS thread) */
    uint32_t team_thread; /* omp_get_thread_num() in its team */
    uint32_t team_size;
    uint32_t parts;       /* parts it ran in (>= 1); their times and
                             threads: ompf_xu_parts() */
    int32_t cpu, core, numa; /* at start; -1 when unknown */
    uint8_t kind;         /* ompf_xu_kind_t */
    uint64_t start_ns, end_ns;
    uint64_t iter_start, iter_count; /* chunks: first logical iteration and
                                        count; tasks: 0, 0 */
} ompf_xu_t;

/* One OS thread of the run and its per-event totals. */
typedef struct ompf_thread {
    uint32_t index;  /* tool thread index; equals its position in the table */
    int32_t os_tid;  /* -1 when unknown */
    /* The following point at n_events values each (owned by the profile). */
    double *total;   /* counter total over the thread's lifetime */
    double *gap;     /* part not inside any XU (runtime, waits, serial) */
    double *enabled_ns; /* time enabled / running per event (HEM, mux) */
    double *running_ns;
} ompf_thread_t;

/* A source run of a fused profile. */
typedef struct ompf_source {
    uint64_t run_id;
    const char *path; /* file it was read from */
} ompf_source_t;

/* ---- the profile object ---------------------------------------------- */

typedef struct ompf_profile ompf_profile_t;

int ompf_profile_create(ompf_profile_t **out);
void ompf_profile_destroy(ompf_profile_t *p);

/* Metadata: an ordered list of string key/value pairs.  Well-known keys
 * (see docs/format.md): format_version, tool_version, program, argv
 * (arguments joined by \x1f), hostname, cpu_model, kernel, omp_runtime,
 * team_size, omp_env, start_time, mode, role, pmu_slots, run_id, strategy,
 * strategy_params, forced. */
int ompf_meta_set(ompf_profile_t *p, const char *key, const char *value);
const char *ompf_meta_get(const ompf_profile_t *p, const char *key); /*NULL*/
/* The GNU build-id of the recorded program (metadata "program"), from a
 * construct in it; "" when none of its constructs is recorded. */
const char *ompf_program_build_id(const ompf_profile_t *p);
/* 1 when two recordings are of one executable at two paths: the programs'
 * paths differ, their file names and (known) build-ids agree, and so do
 * their argv (joined by \x1f) once argv[0] is cut to its file name. */
int ompf_program_moved(const char *prog_a, const char *argv_a, const char *bid_a,
                       const char *prog_b, const char *argv_b, const char *bid_b);
/* This machine's CPU model as profiles record it (metadata cpu_model):
 * /proc/cpuinfo's model name, "unknown" when there is none. */
void ompf_cpu_model(char *buf, size_t len);
/* The OpenMP environment of envp as profiles record it (metadata
 * omp_env): its OMP_* and KMP_* variables but the tool's own (OMP_TOOL*),
 * sorted, joined by \x1f ("" when none).  Returns the length it needs
 * (not counting the NUL); buf holds all of it when that is below len. */
size_t ompf_omp_env(char *const *envp, char *buf, size_t len);
/* The variables in which two such environments differ, as
 * "OMP_SCHEDULE 'static' <in_a>, 'dynamic,10' <in_b>; ..." ("unset" for
 * one not set), truncated to len. */
void ompf_omp_env_diff(const char *a, const char *b, const char *in_a, const char *in_b,
                       char *out, size_t len);
size_t ompf_meta_count(const ompf_profile_t *p);
int ompf_meta_at(const ompf_profile_t *p, size_t i, const char **key,
                 const char **value);
/* run id is a random 64-bit number, stored as "run_id" in hex. */
uint64_t ompf_profile_run_id(const ompf_profile_t *p);
int ompf_profile_set_run_id(ompf_profile_t *p, uint64_t id);

/* Modes recorded in "mode". */
#define OMPF_MODE_RUN "run"             /* one event set, whole run */
#define OMPF_MODE_REFERENCE "reference" /* simultaneous reference run */
#define OMPF_MODE_HEM "hem"             /* multiplexed, cumulative scaling */
#define OMPF_MODE_HEM_DELTA "hem-delta" /* multiplexed, delta scaling */
#define OMPF_MODE_FUSED "fused"         /* result of ompfuse combine */
#define OMPF_MODE_IMPORTED "imported"   /* built from CSV */
#define OMPF_MODE_TRUTH "truth"         /* simulator ground truth */

/* Events.  Adding an event after XUs exist is an error (OMPF_EINVAL):
 * declare events first.  Strings are copied. */
int ompf_event_add(ompf_profile_t *p, const ompf_event_t *ev, uint32_t *idx);
size_t ompf_event_count(const ompf_profile_t *p);
const ompf_event_t *ompf_event_get(const ompf_profile_t *p, uint32_t idx);
int ompf_event_find(const ompf_profile_t *p, const char *name); /* idx|-1 */
int ompf_event_set_status(ompf_profile_t *p, uint32_t idx, int32_t status,
                          const char *reason);
int ompf_event_set_source(ompf_profile_t *p, uint32_t idx, int32_t source);

/* Constructs.  Strings are copied; name is derived when NULL. */
int ompf_construct_add(ompf_profile_t *p, const ompf_construct_t *c,
                       uint32_t *idx);
size_t ompf_construct_count(const ompf_profile_t *p);
const ompf_construct_t *ompf_construct_get(const ompf_profile_t *p,
                                           uint32_t idx);
/* Finds a construct by its stable identity (module basename + build-id +
 * offset, or name when both module and build-id are empty).  Returns the
 * index or -1.  Used to match types across profiles. */
int ompf_construct_find(const ompf_profile_t *p, const ompf_construct_t *key);
/* The construct key of construct idx (its name: imported constructs keep
 * the name they were imported with, the others follow
 * ompf_construct_format as they are resolved); "?" when out of range.
 * What every command prints for a construct. */
const char *ompf_construct_name(const ompf_profile_t *p, uint32_t idx);
/* Writes the cross-run identity string of a construct into buf (matching
 * only: not for display). */
int ompf_construct_key(const ompf_profile_t *p, uint32_t idx, char *buf,
                       size_t len);
int ompf_construct_set_source(ompf_profile_t *p, uint32_t idx,
                              const char *file, int32_t line,
                              const char *function);

/* Label trie.  Node 0 is the root, label "0".  Every node adds one integer
 * component to its parent's label; a trie node exists once per distinct
 * (parent, component).  Labels compare component by component. */
#define OMPF_LABEL_ROOT 0u
/* Returns the child of parent with component comp, creating it if needed. */
int ompf_label_child(ompf_profile_t *p, uint32_t parent, uint64_t comp,
                     uint32_t *node);
/* Adds a child without looking for an equal one, for a copy of another
 * trie's nodes, each added once (the caller knows that no equal child
 * exists): no lookup, and no lookup index until the next call that looks
 * a child up (ompf_label_child, _reserve, _parse, _import) builds it
 * again; that call fails with OMPF_EINVAL if a child was added twice.
 * node may be NULL.  0, OMPF_EINVAL, OMPF_ERANGE (depth or count limits),
 * OMPF_ENOMEM. */
int ompf_label_append(ompf_profile_t *p, uint32_t parent, uint64_t comp, uint32_t *node);
size_t ompf_label_count(const ompf_profile_t *p);
/* Makes room for n label nodes in all (optional: adding that many then
 * never rehashes the child table). */
int ompf_label_reserve(ompf_profile_t *p, size_t n);
/* A hint before ompf_label_child(p, parent, comp) some calls later, to
 * overlap its memory accesses: stage 0 fetches the slot of the child
 * table, stage 1 (after stage 0) the node it points at. */
void ompf_label_prefetch(const ompf_profile_t *p, uint32_t parent, uint64_t comp,
                         int stage);
uint32_t ompf_label_parent(const ompf_profile_t *p, uint32_t node);
uint64_t ompf_label_component(const ompf_profile_t *p, uint32_t node);
uint32_t ompf_label_depth(const ompf_profile_t *p, uint32_t node);
/* Dotted form ("0.1.4198400.3"); returns its length (like snprintf). */
size_t ompf_label_format(const ompf_profile_t *p, uint32_t node, char *buf,
                         size_t len);
/* Parses a dotted label and creates its nodes; "0" is the root. */
int ompf_label_parse(ompf_profile_t *p, const char *s, uint32_t *node);
/* Depth-first rank of every node (ancestor before descendants, children by
 * ascending component): rank must hold ompf_label_count() entries. */
int ompf_label_dfs_rank(const ompf_profile_t *p, uint32_t *rank);
/* Compares two labels of possibly different profiles (<0, 0, >0). */
int ompf_label_compare(const ompf_profile_t *a, uint32_t na,
                       const ompf_profile_t *b, uint32_t nb);
/* Lowest common ancestor of two nodes of the same profile. */
uint32_t ompf_label_common(const ompf_profile_t *p, uint32_t a, uint32_t b);
/* Copies the label of node na in profile a into profile p; *node receives
 * the node in p. */
int ompf_label_import(ompf_profile_t *p, const ompf_profile_t *a, uint32_t na,
                      uint32_t *node);

/* XUs.  values holds ompf_event_count() entries (NULL: all missing). */
int ompf_xu_add(ompf_profile_t *p, const ompf_xu_t *xu, const double *values);
size_t ompf_xu_count(const ompf_profile_t *p);
const ompf_xu_t *ompf_xu_get(const ompf_profile_t *p, size_t i);
/* Row of ompf_event_count() values of XU i (writable). */
double *ompf_xu_values(ompf_profile_t *p, size_t i);
const double *ompf_xu_values_const(const ompf_profile_t *p, size_t i);
/* Reserves room for n XUs (optional, for speed); OMPF_EINVAL on a packed
 * profile (OMPF_LEAN_PACKED), to which nothing is added. */
int ompf_xu_reserve(ompf_profile_t *p, size_t n);

/* Lean profiles.  A command that holds many large profiles at once
 * (combine) reads them lean (ompf_profile_read_into, file.h): each XU keeps
 * its id, type and label, with OMPF_LEAN_START its start_ns, with
 * OMPF_LEAN_TIMES its start_ns and end_ns, besides its values and exact
 * counts; no other field, no parts, no provenance: 16 to 32 bytes an XU
 * instead of 80.  On a lean profile ompf_xu_get() returns NULL and
 * ompf_xu_add() keeps only those fields: read XUs through the views below. */
#define OMPF_LEAN 1u       /* id, type, label */
#define OMPF_LEAN_TIMES 2u /* with OMPF_LEAN: start_ns and end_ns too */
#define OMPF_LEAN_START 4u /* with OMPF_LEAN: start_ns too */
/* with OMPF_LEAN: every other field of each XU and its parts too, packed as
 * varints beside the columns (ompf_profile_pack, or a read with this
 * flag: ompf_profile_read_into, file.h).  A packed profile gives
 * whole records through ompf_xu_record and parts through
 * ompf_xu_parts_copy; ompf_xu_get and ompf_xu_parts give NULL as on any
 * lean profile; nothing can be added to it (ompf_xu_add: OMPF_EINVAL).
 * combine reads its first input so: the fused XUs take that input's
 * records and parts, about 32 bytes a task of a tool-written profile
 * packed, against 80 for the record and 24 for each part. */
#define OMPF_LEAN_PACKED 8u
/* Its OMPF_LEAN flags; 0 for a profile with full XU records. */
unsigned ompf_profile_lean(const ompf_profile_t *p);
/* Makes a full profile packed: flags are OMPF_LEAN | OMPF_LEAN_PACKED, with
 * OMPF_LEAN_START or OMPF_LEAN_TIMES for the columns wanted.  Provenance
 * is dropped, as in a lean read; pointers from ompf_xu_get, ompf_xu_parts
 * and the views are invalid after.  0, OMPF_EINVAL (p lean already, or bad
 * flags) or OMPF_ENOMEM (p unchanged). */
int ompf_profile_pack(ompf_profile_t *p, unsigned flags);
/* Makes a lean profile that is not packed hold fewer columns: flags
 * (OMPF_LEAN, optionally with OMPF_LEAN_START or OMPF_LEAN_TIMES) names
 * what it keeps, a subset of what it has; the others are freed, as if it
 * had been read with flags (their views' base is NULL after).  With
 * OMPF_LEAN_NO_TYPE the type column goes too (fusion, once it has grouped
 * the XUs by type): the type view's base is NULL after, and the profile
 * no longer takes XUs.  0 or OMPF_EINVAL (p full or packed, or flags not
 * a subset). */
#define OMPF_LEAN_NO_TYPE 16u
int ompf_profile_lean_narrow(ompf_profile_t *p, unsigned flags);
/* A strided view of one XU field, lean or full alike: XU i's value is
 * base[i * stride].  base is NULL when the profile does not hold the field
 * (or has no XUs).  Valid until the next ompf_xu_add, ompf_xu_reserve or
 * ompf_profile_pack. */
typedef enum ompf_xu_field {
    OMPF_XU_ID,    /* u64 */
    OMPF_XU_TYPE,  /* u32 */
    OMPF_XU_LABEL, /* u32 */
    OMPF_XU_START, /* u64 */
    OMPF_XU_END    /* u64 */
} ompf_xu_field_t;
typedef struct ompf_u32_view {
    const uint32_t *base;
    size_t stride;
} ompf_u32_view_t;
typedef struct ompf_u64_view {
    const uint64_t *base;
    size_t stride;
} ompf_u64_view_t;
ompf_u32_view_t ompf_xu_view_u32(const ompf_profile_t *p, ompf_xu_field_t f);
ompf_u64_view_t ompf_xu_view_u64(const ompf_profile_t *p, ompf_xu_field_t f);
/* The same over the label trie's nodes (node i's parent or depth is
 * base[i * stride]; the root's parent is OMPF_NONE32), for code that walks
 * millions of labels (fusion's common prefixes) without a call per step.
 * Valid until the next node is added. */
typedef enum ompf_label_field {
    OMPF_LABEL_PARENT, /* u32 */
    OMPF_LABEL_DEPTH   /* u32 */
} ompf_label_field_t;
ompf_u32_view_t ompf_label_view_u32(const ompf_profile_t *p, ompf_label_field_t f);

/* Shared labels.  A command that holds many runs of one program (combine)
 * keeps each label once: ompf_profile_move_labels(p, space) adds every
 * label of p to space's trie (space may be a profile used for nothing
 * else), makes each XU's label field the node in space, and leaves p's own
 * trie the root alone.  Call it after p's XUs are all added.
 * ompf_profile_label_space() is the profile whose trie the XU labels
 * index: space after the move, else p itself.  OMPF_EINVAL when p's
 * labels were moved already. */
int ompf_profile_move_labels(ompf_profile_t *p, ompf_profile_t *space);
/* Adds every label of p's own trie to dst's and sets map[node in p] to
 * the node in dst (map: ompf_label_count(p) entries); OMPF_EFORMAT when a
 * node's parent does not precede it. */
int ompf_label_map_into(const ompf_profile_t *p, ompf_profile_t *dst, uint32_t *map);
const ompf_profile_t *ompf_profile_label_space(const ompf_profile_t *p);
/* Frees p's label lookup index (about 16 bytes a label), for a trie that
 * is complete; the next ompf_label_child() builds it again. */
void ompf_label_drop_index(ompf_profile_t *p);

/* Exact counts.  A value is a double, which holds every integer up to 2^53
 * but not every one above (2^53 + 1 has none).  A count up to 2^64-1 keeps
 * its exact value in a sparse table beside the row (values up to 2^53,
 * the common case, cost nothing): ompf_xu_value_set_u64 stores it and
 * puts the nearest double in the row, where arithmetic uses it.  An exact
 * count applies while the row still holds that double: changing the value
 * through ompf_xu_values() drops it.  Kept by the file format, CSV import
 * and export, JSON export and combine (docs/format.md, 1.5). */
int ompf_xu_value_set_u64(ompf_profile_t *p, size_t i, uint32_t e, uint64_t v);
/* 1 and *v when value e of XU i is an integer in [0, 2^64-1] (its exact
 * count, or a double that is such an integer); 0 when it is missing,
 * negative, fractional or beyond 2^64-1. */
int ompf_xu_value_u64(const ompf_profile_t *p, size_t i, uint32_t e, uint64_t *v);
/* Number of values whose exact count no double holds. */
size_t ompf_xu_exact_count(const ompf_profile_t *p);

/* Parts.  A task that was suspended and resumed (a taskwait or taskyield
 * that ran other tasks, an untied task moving threads) ran in several
 * parts, each a stretch of time on one thread.  A profile may record them
 * (docs/format.md, PARTS); the XU's start_ns/end_ns are the first part's
 * start and the last part's end, its thread the last part's. */
typedef struct ompf_part {
    uint32_t thread;          /* thread index it ran on */
    uint64_t start_ns, end_ns;
} ompf_part_t;
/* Records the n (>= 1) parts of XU i, copied in the order given (by
 * start), and sets its parts field to n; n == 0 forgets them.
 * OMPF_ERANGE when i is not an XU or n above OMPF_MAX_PARTS_PER_XU
 * (ompfuse/file.h). */
int ompf_xu_set_parts(ompf_profile_t *p, size_t i, const ompf_part_t *parts, uint32_t n);
/* The parts of XU i and their number in *n.  An XU without recorded parts
 * (one part, or a profile that kept only the count) is one span: *one is
 * filled with its thread, start_ns and end_ns and returned, *n = 1.  NULL
 * (and *n = 0) when i is not an XU. */
const ompf_part_t *ompf_xu_parts(const ompf_profile_t *p, size_t i, uint32_t *n,
                                 ompf_part_t *one);
/* XU i's whole record into *out, from a full or a packed profile; 0,
 * OMPF_ERANGE (no XU i) or OMPF_EINVAL (a lean profile not packed). */
int ompf_xu_record(const ompf_profile_t *p, size_t i, ompf_xu_t *out);
/* XU i's parts into buf (cap entries), from a full or a packed profile,
 * as ompf_xu_parts gives them (one span when none is recorded); *n their
 * number.  0, OMPF_ERANGE (no XU i, or cap < *n: nothing copied; call
 * again with *n entries) or OMPF_EINVAL (a lean profile not packed). */
int ompf_xu_parts_copy(const ompf_profile_t *p, size_t i, ompf_part_t *buf, uint32_t cap,
                       uint32_t *n);
/* 1 when XU i has recorded parts. */
int ompf_xu_has_parts(const ompf_profile_t *p, size_t i);
/* Recorded parts in the whole profile. */
size_t ompf_part_count(const ompf_profile_t *p);
/* Threads.  A thread's arrays start as missing values. */
int ompf_thread_add(ompf_profile_t *p, int32_t os_tid, uint32_t *idx);
size_t ompf_thread_count(const ompf_profile_t *p);
ompf_thread_t *ompf_thread_get(ompf_profile_t *p, uint32_t idx);
const ompf_thread_t *ompf_thread_get_const(const ompf_profile_t *p,
                                           uint32_t idx);

/* Provenance of fused profiles.  Adding sources fixes the number of
 * provenance columns; each XU then has one source-XU id per source
 * (OMPF_NONE64 where that run contributed nothing). */
int ompf_source_add(ompf_profile_t *p, const ompf_source_t *s, uint32_t *idx);
size_t ompf_source_count(const ompf_profile_t *p);
const ompf_source_t *ompf_source_get(const ompf_profile_t *p, uint32_t idx);
uint64_t *ompf_xu_provenance(ompf_profile_t *p, size_t i);
const uint64_t *ompf_xu_provenance_const(const ompf_profile_t *p, size_t i);

/* Deep comparison for tests: 0 when equal; otherwise writes where they
 * differ into err. */
int ompf_profile_compare(const ompf_profile_t *a, const ompf_profile_t *b,
                         ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
