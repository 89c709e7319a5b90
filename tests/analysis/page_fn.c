/* ompf_analysis_page on a profile file: a page with one timeline lane per
 * thread and one table row per construct plus the gap; a missing input
 * names the file, and leaves no page.
 * usage: analyze_page_fn PROFILE WORKDIR (PROFILE: 3 threads, 4 constructs) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ompfuse/analysis.h"
#include "ompfuse/file.h"

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p++)
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    char page[4096], nopage[4096];
    snprintf(page, sizeof page, "%s/fn.html", argv[2]);
    snprintf(nopage, sizeof nopage, "%s/none.html", argv[2]);
    ompf_error_t err = {0};
    int fails = 0;
    if (ompf_analysis_page(argv[1], page, &err)) {
        fprintf(stderr, "FAIL: ompf_analysis_page: %s\n", err.msg);
        return 1;
    }
    char *html;
    if (ompf_read_file(page, 1 << 26, &html, NULL)) {
        fprintf(stderr, "FAIL: no page at %s\n", page);
        return 1;
    }
    size_t lanes = count(html, "<g class=\"lane\""), rows = count(html, "<tr") - 1;
    if (lanes != 3 || rows != 5) {
        fprintf(stderr, "FAIL: %zu lanes (want 3), %zu rows (want 5)\n", lanes, rows);
        fails++;
    }
    free(html);
    int rc = ompf_analysis_page("/nonexistent/x.ompf", nopage, &err);
    if (!rc || !strstr(err.msg, "/nonexistent/x.ompf") || access(nopage, F_OK) == 0) {
        fprintf(stderr, "FAIL: missing input: rc %d, '%s'\n", rc, err.msg);
        fails++;
    }
    if (!fails)
        printf("ompf_analysis_page: all checks passed\n");
    return fails != 0;
}
