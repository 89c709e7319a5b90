/* Text in the formats the commands write: one escaper each, shared by
 * the CSV, JSON and HTML writers of every folder; and how far a mistyped
 * name is from a known one, for "did you mean" in messages. */
#ifndef OMPF_TEXT_H
#define OMPF_TEXT_H

#include <stdio.h>

/* One CSV field (RFC 4180): quoted, with inner quotes doubled, only when it
 * holds a comma, quote or line break; NULL is the empty field. */
void ompf_csv_field(FILE *out, const char *s);
/* A JSON string, quoted and escaped (control characters as \u00XX); NULL
 * prints null. */
void ompf_json_string(FILE *out, const char *s);
/* HTML text, also safe inside a double-quoted attribute: <, >, &, " as
 * entities; the argv separator \x1f as a space; NULL prints nothing. */
void ompf_html_text(FILE *out, const char *s);
/* Case-insensitive Levenshtein distance between a and b; (size_t)-1 when
 * either is longer than 200 bytes. */
size_t ompf_edit_distance(const char *a, const char *b);

#endif
