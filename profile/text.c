/* The escapers and the name matcher of include/ompfuse/text.h. */
#include <ctype.h>
#include <string.h>

#include "ompfuse/text.h"

/* Quotes only when needed, so that plain fields stay plain. */
void ompf_csv_field(FILE *out, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', out);
        putc(*s, out);
    }
    putc('"', out);
}

void ompf_json_string(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    /* unlocked: one writer per stream, and exports call this per XU */
    putc_unlocked('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            putc_unlocked('\\', out);
            putc_unlocked(*c, out);
        } else if (*c < 0x20) {
            /* control characters (argv's \x1f separator among them) */
            fprintf(out, "\\u%04x", *c);
        } else {
            putc_unlocked(*c, out);
        }
    }
    putc_unlocked('"', out);
}

void ompf_html_text(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\x1f': putc(' ', out); break;
        default: putc(*s, out);
        }
    }
}

size_t ompf_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 200 || lb > 200)
        return (size_t)-1;
    size_t row[201];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) !=
                          tolower((unsigned char)b[j - 1]);
            size_t v = diag + cost;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            if (up + 1 < v)
                v = up + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[lb];
}
