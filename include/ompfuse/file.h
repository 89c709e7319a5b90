/*
 * ompfuse profile files: reading, writing, streaming.  The byte layout is
 * documented in docs/format.md.
 *
 * A file is a header followed by checksummed chunks (metadata, events,
 * constructs, label nodes, XUs, threads, sources, end).  On disk, records
 * refer to each other by 64-bit ids chosen by the writer, so that many
 * threads can write independent chunks; the reader maps ids to the dense
 * indices of the in-memory model.  A file without its END chunk is
 * truncated: the reader salvages every complete chunk and says so.
 */
#ifndef OMPFUSE_FILE_H
#define OMPFUSE_FILE_H

#include <stdio.h>
#include "ompfuse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OMPF_FORMAT_VERSION 2u

/* ---- limits on what a file declares ---------------------------------------
 * The profile reader, CSV import and the fuzzers refuse a file that
 * declares more than these (docs/format.md, "Limits"), with a message
 * naming the file, the limit and the value, before allocating for it.
 * Below them every reader costs time linear in the file. */
#define OMPF_MAX_EVENTS 16384u          /* events (CSV: event columns) */
#define OMPF_MAX_CONSTRUCTS (1u << 20)  /* distinct constructs */
#define OMPF_MAX_THREADS 65536u         /* thread records; indices below */
#define OMPF_MAX_LABEL_DEPTH 65536u     /* components of one XU label */
#define OMPF_MAX_SOURCES 4096u          /* provenance sources (inputs fused) */
#define OMPF_MAX_META 4096u             /* metadata entries */
#define OMPF_MAX_PARTS_PER_XU (1u << 24) /* recorded parts of one XU */

typedef struct ompf_read_info {
    int truncated;        /* 1 when the file ends before its END chunk (a
                             damaged chunk is an error, not truncation) */
    uint64_t xus_read;    /* XUs in the returned profile */
    uint64_t xus_dropped; /* XUs dropped because they referred to records
                             lost in truncation */
    uint64_t chunks;      /* complete chunks read */
    char note[256];       /* e.g. "truncated after 1200 XUs (chunk 14)" */
} ompf_read_info_t;

/* Reads a profile.  Returns 0 for a complete file; OMPF_ETRUNC when the
 * file was cut short but a usable profile was salvaged (*out is set and
 * info says what was lost); any other negative code leaves *out NULL and
 * err names the file and the problem. */
int ompf_profile_read(const char *path, ompf_profile_t **out,
                      ompf_read_info_t *info, ompf_error_t *err);
/* Beside the lean flags: this is the last read into labels, so the trie's
 * hash goes before this file's XUs are read, instead of being kept for
 * the next reader's lookups (memory: about 16 bytes a label). */
#define OMPF_LABELS_LAST 0x100u
/* The same, for a command that holds many runs at once (combine): flags 0
 * reads in full, OMPF_LEAN (optionally | OMPF_LEAN_START or
 * OMPF_LEAN_TIMES, and | OMPF_LEAN_PACKED to keep the rest packed) lean
 * (profile.h, "Lean profiles"); labels, when not
 * NULL, is the trie the labels go to, as if ompf_profile_move_labels(*out,
 * labels) followed (profile.h, "Shared labels"), but without building the
 * profile's own trie first.  The file is checked as by ompf_profile_read
 * (the same errors for the same files), but a lean read does not match the
 * recorded parts, which it does not keep, to their XUs (a packed read
 * does, as a full read).  A read that fails leaves labels as it was.
 * OMPF_LABELS_LAST may be or'ed into flags. */
int ompf_profile_read_into(const char *path, unsigned flags, ompf_profile_t *labels,
                           ompf_profile_t **out, ompf_read_info_t *info, ompf_error_t *err);
/* Same from memory (fuzzing, tests); name is used in messages. */
int ompf_profile_read_mem(const void *buf, size_t len, const char *name,
                          ompf_profile_t **out, ompf_read_info_t *info,
                          ompf_error_t *err);
/* ompf_profile_read_into from memory (fuzzing, tests). */
int ompf_profile_read_mem_into(const void *buf, size_t len, const char *name, unsigned flags,
                               ompf_profile_t *labels, ompf_profile_t **out,
                               ompf_read_info_t *info, ompf_error_t *err);

/* Writes a whole profile: to "<path>.tmp.<pid>", then renamed to path, so
 * that path is never half-written. */
int ompf_profile_write(const ompf_profile_t *p, const char *path,
                       ompf_error_t *err);

/* XUs produced on demand, for a profile too large to hold whole (combine
 * writes its fused XUs so).  rows fills XUs first .. first + n - 1 (n at
 * most 65536): records, values (n x the header's events, row-major) and
 * provenance (n x its sources); a nonzero return (an OMPF_E* code) stops
 * the write.  exact (may be NULL), called once after the rows, gives the
 * counts a double cannot hold as triples (XU id, event, count) in XU
 * order then event order; parts (may be NULL) gives XU i's parts as
 * ompf_xu_parts does, and its id, or NULL when it has none (NULL with
 * *n > 0: out of memory, and the write fails).  label (may be NULL) gives
 * the label trie instead of the header, which then holds the root alone:
 * n_labels nodes, the root (node 0) included, each node's parent (a
 * lower node) and component, as ompf_label_parent and
 * ompf_label_component would; the XUs' labels are these nodes.  A trie
 * of millions of labels that another structure holds already need not
 * be copied into the header. */
typedef struct ompf_xu_feed {
    size_t n_xu;
    void *ctx;
    int (*rows)(void *ctx, size_t first, size_t n, ompf_xu_t *xu,
                double *values, uint64_t *prov);
    void (*exact)(void *ctx, const uint64_t **triples, size_t *n);
    const ompf_part_t *(*parts)(void *ctx, size_t i, uint32_t *n,
                                ompf_part_t *one, uint64_t *xu_id);
    size_t n_labels;
    void (*label)(void *ctx, uint32_t node, uint32_t *parent, uint64_t *comp);
} ompf_xu_feed_t;
/* Writes header (everything but its XUs, which must be none) with the
 * feed's XUs, byte for byte as ompf_profile_write would write the same
 * profile holding them; temporary name and rename as there. */
int ompf_profile_write_feed(const ompf_profile_t *header,
                            const ompf_xu_feed_t *feed, const char *path,
                            ompf_error_t *err);

/* ---- streaming writer (used by the OMPT tool) ----------------------------
 * One writer per output file, one stream per producing thread.  Adding a
 * record to a stream touches only that stream's buffer; a full buffer is
 * compressed and appended as a chunk under the writer's lock (one lock per
 * chunk, never per record).  ompf_writer_finish() flushes every stream,
 * writes the END chunk and renames the temporary file into place.  A
 * process that dies leaves "<path>.tmp.<pid>", readable up to its last
 * complete chunk.
 */
typedef struct ompf_writer ompf_writer_t;
typedef struct ompf_wstream ompf_wstream_t;

/* header: metadata and events to write first (its XUs etc. are ignored). */
int ompf_writer_create(const char *path, const ompf_profile_t *header,
                       ompf_writer_t **out, ompf_error_t *err);
/* Path of the temporary file being written. */
const char *ompf_writer_tmp_path(const ompf_writer_t *w);

/* capacity_bytes: buffer size before a flush (0 = default 1 MiB). */
int ompf_wstream_create(ompf_writer_t *w, size_t capacity_bytes,
                        ompf_wstream_t **out);

/* Label node: id unique in the file (never 0: id 0 is the root, label "0"),
 * parent id (0 for children of the root), one label component. */
int ompf_wstream_label(ompf_wstream_t *s, uint64_t id, uint64_t parent_id,
                       uint64_t component);
/* n (1..16) label nodes in one call: ids first_id .. first_id + n - 1, the
 * first a child of parent_id, each next one a child of the one before,
 * with components comps[0..n).  The same as n ompf_wstream_label calls. */
int ompf_wstream_label_path(ompf_wstream_t *s, uint64_t first_id,
                            uint64_t parent_id, const uint64_t *comps,
                            unsigned n);
/* Construct with a writer-chosen id (the same construct may be written by
 * several streams with the same id and content; the reader keeps one). */
int ompf_wstream_construct(ompf_wstream_t *s, uint64_t id,
                           const ompf_construct_t *c);
/* XU: xu->type and xu->label are ignored; construct_id and label_id refer
 * to records written by any stream of this writer.  xu->thread is the
 * thread index as given to ompf_wstream_thread(). */
int ompf_wstream_xu(ompf_wstream_t *s, const ompf_xu_t *xu,
                    uint64_t construct_id, uint64_t label_id,
                    const double *values);
/* One part of XU xu_id (an XU that ran in several parts: all of its parts,
 * from any stream, each once; docs/format.md, PARTS). */
int ompf_wstream_part(ompf_wstream_t *s, uint64_t xu_id, const ompf_part_t *part);
/* Thread record with its n_events totals (index must be unique). */
int ompf_wstream_thread(ompf_wstream_t *s, const ompf_thread_t *t);
/* Writes what is buffered as chunk(s) now. */
int ompf_wstream_flush(ompf_wstream_t *s);

/* trailer: metadata and event statuses learnt during the run (may be
 * NULL); its events must have the same names as the header's.  Flushes all
 * streams, destroys them, writes END, renames.  The writer is freed. */
int ompf_writer_finish(ompf_writer_t *w, const ompf_profile_t *trailer,
                       ompf_error_t *err);
/* Frees the writer and its streams, removes the temporary file. */
void ompf_writer_abort(ompf_writer_t *w);

/* ---- source resolution ---------------------------------------------------
 * Fills file, line and function of every construct that has none yet and
 * whose module exists on this machine with the build-id recorded, in
 * process with libdw (libompfresolve), at offset - 1 (the call's return
 * address minus one lies in the pragma's line).  The function is the
 * innermost one (inlined or not) from DWARF, else from the symbol table;
 * a construct whose line is unknown (0 at -O2) gets its function only.
 * The construct's name, the key every command prints
 * (ompf_construct_name), follows.  Returns how many constructs got a line
 * or a function, or a negative OMPF_E* code.  Every command that prints
 * construct names calls it after reading a profile. */
int ompf_resolve_constructs(ompf_profile_t *p, ompf_error_t *err);

/* ---- output files written atomically -------------------------------------
 * For every other output (CSV, HTML, plans): written to a temporary name in
 * the same directory and renamed on commit.  Path "-" means stdout; a path
 * that names a device, FIFO or socket (ompf_output_is_special) is written
 * directly. */

/* 1 when path exists and is neither a regular file nor a directory: a
 * device, FIFO or socket such as /dev/null or /dev/stdout.  Writers then
 * write to it directly: renaming a temporary over it would replace the
 * device node (as root, /dev/null became a regular file). */
int ompf_output_is_special(const char *path);
typedef struct ompf_outfile ompf_outfile_t;
int ompf_outfile_open(const char *path, ompf_outfile_t **out, FILE **fp,
                      ompf_error_t *err);
int ompf_outfile_commit(ompf_outfile_t *o, ompf_error_t *err);
void ompf_outfile_abort(ompf_outfile_t *o);

/* A writer that dies leaves "<path>.tmp.<pid>".  Removes those of path
 * whose process no longer exists (a live pid keeps its file), naming each
 * on note (NULL: silently) after "prog: ".  Commands call it before they
 * write path.  Returns how many were removed, or OMPF_ENOMEM. */
int ompf_stale_tmp_remove(const char *path, FILE *note, const char *prog);

/* ---- opening inputs ------------------------------------------------------
 * Every reader opens its input through these: the open never blocks (a
 * FIFO would wait for a writer for ever) and anything that is not a
 * regular file (directory, FIFO, device, socket) is refused before a byte
 * is read.  ompf_open_input returns a descriptor (O_CLOEXEC, blocking
 * again) or a negative OMPF_E* code with err naming the path and the reason
 * ("PATH: cannot open: <strerror>", "PATH: not a regular file (a FIFO);
 * pass a WHAT"); errno is kept (EISDIR for a directory, EINVAL for the
 * other non-regular files).  ompf_fopen_input: the same as a FILE. */
int ompf_open_input(const char *path, const char *what, ompf_error_t *err);
int ompf_fopen_input(const char *path, const char *what, FILE **fp, ompf_error_t *err);

/* ---- small input files read whole (plans, models, saved commands) --------
 * *data: the file's bytes plus a terminating NUL (free it), *len (may be
 * NULL) their count.  0; OMPF_EIO when it cannot be opened or read, or is
 * not a regular file (errno says why, see ompf_open_input); OMPF_ERANGE
 * when it is larger than max bytes; OMPF_ENOMEM.  The caller words the
 * message: it knows what the file was meant to be. */
int ompf_read_file(const char *path, size_t max, char **data, size_t *len);
/* The same, with the message worded: "PATH: cannot open: <strerror>",
 * "PATH: not a regular file (a FIFO); pass a WHAT", "PATH: larger than MAX
 * bytes; not a WHAT". */
int ompf_read_input(const char *path, size_t max, const char *what, char **data,
                    size_t *len, ompf_error_t *err);

#ifdef __cplusplus
}
#endif
#endif
