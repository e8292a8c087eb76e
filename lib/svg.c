/* svg.c - a stacked-area chart as a standalone SVG document: memory against
 * context length, one band per part of the cache (full layers, windows,
 * latent, fixed state), which says at a glance what grows and what does
 * not.  Hand-written because it is one chart: no plotting dependency. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kvp_int.h"

#define W 760
#define H 420
#define L_MARGIN 80
#define R_MARGIN 190
#define T_MARGIN 50
#define B_MARGIN 60

static const char *colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                               "#76b7b2", "#edc948", "#b07aa1", "#9c755f"};

/* A round step for about n ticks over [0, max]. */
static double nice_step(double max, int n)
{
    double raw = max / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

static void escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

static double px_x(double x, double xmax) { return L_MARGIN + x / xmax * (W - L_MARGIN - R_MARGIN); }
static double px_y(double y, double ymax) { return H - B_MARGIN - y / ymax * (H - T_MARGIN - B_MARGIN); }

static void axes(FILE *f, double xmax, double ymax, const char *xlabel, const char *ylabel)
{
    /* ticks at round numbers of K tokens (1K = 1024, as context lengths go) */
    double xs = nice_step(xmax / 1024, 6) * 1024, ys = nice_step(ymax, 6);
    fprintf(f, "<g stroke=\"#999\" stroke-width=\"1\">\n");
    for (double y = 0; y <= ymax * 1.0001; y += ys)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
                L_MARGIN, px_y(y, ymax), W - R_MARGIN, px_y(y, ymax));
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", L_MARGIN, H - B_MARGIN,
            W - R_MARGIN, H - B_MARGIN);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n", L_MARGIN, T_MARGIN,
            L_MARGIN, H - B_MARGIN);
    fprintf(f, "<g font-family=\"sans-serif\" font-size=\"11\" fill=\"#333\">\n");
    for (double x = 0; x <= xmax * 1.0001; x += xs)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%gK</text>\n",
                px_x(x, xmax), H - B_MARGIN + 16, x / 1024);
    for (double y = 0; y <= ymax * 1.0001; y += ys)
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L_MARGIN - 6,
                px_y(y, ymax) + 4, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", px_x(xmax / 2, xmax),
            H - 18);
    escape(f, xlabel);
    fprintf(f, "</text>\n<text transform=\"translate(18,%d) rotate(-90)\" text-anchor=\"middle\">",
            (H - B_MARGIN + T_MARGIN) / 2);
    escape(f, ylabel);
    fprintf(f, "</text>\n</g>\n");
}

int kvp_svg_stacked(const char *path, int force, const char *title, const double *x, size_t n,
                    const double *const *bands, const char *const *labels, size_t n_bands,
                    kvp_error *err)
{
    if (n < 2 || !n_bands || n_bands > sizeof colors / sizeof colors[0])
        return kvp_fail(err, KVP_EUSAGE, "%s: a chart needs 2+ points and 1 to 8 bands", path);
    FILE *f = NULL;
    if (!force) {
        f = fopen(path, "r");
        if (f) {
            fclose(f);
            return kvp_fail(err, KVP_EINPUT, "%s: exists; give --force to overwrite it", path);
        }
    }
    if (!(f = fopen(path, "w")))
        return kvp_fail(err, KVP_EINPUT, "%s: cannot write", path);
    double ymax = 0, xmax = x[n - 1];
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t b = 0; b < n_bands; b++)
            s += bands[b][i];
        ymax = s > ymax ? s : ymax;
    }
    ymax = ymax > 0 ? nice_step(ymax, 6) * ceil(ymax / nice_step(ymax, 6)) : 1;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"28\" font-family=\"sans-serif\" font-size=\"15\" fill=\"#222\">",
            W, H, W, H, L_MARGIN);
    escape(f, title);
    fprintf(f, "</text>\n");
    axes(f, xmax, ymax, "context length (tokens)", "MiB (2^20 bytes)");
    double *base = calloc(n, sizeof *base);
    if (!base) {
        fclose(f);
        return kvp_fail(err, KVP_EINPUT, "out of memory");
    }
    for (size_t b = 0; b < n_bands; b++) {
        fprintf(f, "<path class=\"band\" fill=\"%s\" fill-opacity=\"0.85\" stroke=\"%s\" d=\"",
                colors[b], colors[b]);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%c%.1f,%.1f ", i ? 'L' : 'M', px_x(x[i], xmax),
                    px_y(base[i] + bands[b][i], ymax));
        for (size_t i = n; i-- > 0;)
            fprintf(f, "L%.1f,%.1f ", px_x(x[i], xmax), px_y(base[i], ymax));
        fprintf(f, "Z\"/>\n");
        for (size_t i = 0; i < n; i++)
            base[i] += bands[b][i];
        fprintf(f, "<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"%zu\" font-family=\"sans-serif\" font-size=\"12\">",
                W - R_MARGIN + 16, T_MARGIN + b * 20, colors[b], W - R_MARGIN + 34,
                T_MARGIN + b * 20 + 10);
        escape(f, labels[b]);
        fprintf(f, "</text>\n");
    }
    free(base);
    fprintf(f, "</svg>\n");
    return fclose(f) ? kvp_fail(err, KVP_EINPUT, "%s: write failed", path) : 0;
}
