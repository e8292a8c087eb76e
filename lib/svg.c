/* svg.c - charts as standalone SVG documents: a stacked area of memory
 * against context length, one band per part of the cache (full layers,
 * windows, latent, fixed state), which says at a glance what grows and what
 * does not; two lines on two axes (the serving sweep's hit rate and wall
 * time against capacity), where the cliff shows in both units at once; and
 * hit rates on one axis (the prefix-cache sweep, log-scaled when it spans
 * a wide range).  Hand-written because they are three charts: no plotting
 * dependency. */
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

/* An existing file is kept unless force. */
static FILE *open_out(const char *path, int force, kvp_error *err)
{
    FILE *f = force ? NULL : fopen(path, "r");
    if (f) {
        fclose(f);
        kvp_fail(err, KVP_EINPUT, "%s: exists; give --force to overwrite it", path);
        return NULL;
    }
    if (!(f = fopen(path, "w")))
        kvp_fail(err, KVP_EINPUT, "%s: cannot write", path);
    return f;
}

/* the document, its white background and the chart's title */
static void header(FILE *f, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
               "<text x=\"%d\" y=\"28\" font-family=\"sans-serif\" font-size=\"15\" fill=\"#222\">",
            W, H, W, H, L_MARGIN);
    escape(f, title);
    fprintf(f, "</text>\n");
}

int kvp_svg_stacked(const char *path, int force, const char *title, const double *x, size_t n,
                    const double *const *bands, const char *const *labels, size_t n_bands,
                    kvp_error *err)
{
    if (n < 2 || !n_bands || n_bands > sizeof colors / sizeof colors[0])
        return kvp_fail(err, KVP_EUSAGE, "%s: a chart needs 2+ points and 1 to 8 bands", path);
    FILE *f = open_out(path, force, err);
    if (!f)
        return -1;
    double ymax = 0, xmax = x[n - 1];
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t b = 0; b < n_bands; b++)
            s += bands[b][i];
        ymax = s > ymax ? s : ymax;
    }
    ymax = ymax > 0 ? nice_step(ymax, 6) * ceil(ymax / nice_step(ymax, 6)) : 1;
    header(f, title);
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

/* ---- two lines, two y axes ---- */

typedef struct frame {
    double x0, x1, ymax[2];
    int logx;   /* x on a log scale (a sweep spaced by a constant factor) */
} frame;

static double fx(const frame *fr, double x)
{
    double a = fr->logx ? log(fr->x0) : fr->x0, b = fr->logx ? log(fr->x1) : fr->x1;
    double v = fr->logx ? log(x) : x, span = b > a ? b - a : 1;
    return L_MARGIN + (v - a) / span * (W - L_MARGIN - R_MARGIN);
}

/* the i-th of 6 x ticks, evenly spaced on the frame's scale */
static double tick_x(const frame *fr, int i)
{
    return fr->logx ? fr->x0 * pow(fr->x1 / fr->x0, i / 5.0) : fr->x0 + (fr->x1 - fr->x0) * i / 5;
}

/* a token count as a tick label: 8.9K, 210K, 14.2M */
static void tick_label(char *buf, size_t n, double x)
{
    if (x >= 1e6)
        snprintf(buf, n, "%.3gM", x / 1e6);
    else
        snprintf(buf, n, "%.3gK", x / 1e3);
}

static void line_axes(FILE *f, const frame *fr, const char *xlabel, const char *const *ylab)
{
    fprintf(f, "<g stroke=\"#999\" stroke-width=\"1\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
               "y2=\"%d\"/>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n<line x1=\"%d\" "
               "y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n</g>\n",
            L_MARGIN, H - B_MARGIN, W - R_MARGIN, H - B_MARGIN, L_MARGIN, T_MARGIN, L_MARGIN,
            H - B_MARGIN, W - R_MARGIN, T_MARGIN, W - R_MARGIN, H - B_MARGIN);
    fprintf(f, "<g font-family=\"sans-serif\" font-size=\"11\" fill=\"#333\">\n");
    for (int i = 0; i <= 5; i++) {
        char label[32];
        double x = tick_x(fr, i);
        tick_label(label, sizeof label, x);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", fx(fr, x),
                H - B_MARGIN + 16, label);
    }
    for (int a = 0; a < 2; a++) {
        double ys = nice_step(fr->ymax[a], 5);
        for (double y = 0; y <= fr->ymax[a] * 1.0001; y += ys)
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">%g</text>\n",
                    a ? W - R_MARGIN + 6 : L_MARGIN - 6, px_y(y, fr->ymax[a]) + 4,
                    a ? "start" : "end", colors[a], y);
    }
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", fx(fr, (fr->x0 + fr->x1) / 2),
            H - 18);
    escape(f, xlabel);
    for (int a = 0; a < 2; a++) {
        fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" fill=\"%s\">", W - R_MARGIN + 60,
                T_MARGIN + 10 + 20 * a, colors[a]);
        escape(f, ylab[a]);
    }
    fprintf(f, "</text>\n</g>\n");
}

static void polyline(FILE *f, const frame *fr, const double *x, const double *y, size_t n, int a)
{
    fprintf(f, "<path class=\"line\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" d=\"",
            colors[a]);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%c%.1f,%.1f ", i ? 'L' : 'M', fx(fr, x[i]), px_y(y[i], fr->ymax[a]));
    fprintf(f, "\"/>\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", fx(fr, x[i]),
                px_y(y[i], fr->ymax[a]), colors[a]);
}

static double axis_max(const double *y, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = y[i] > m ? y[i] : m;
    return m > 0 ? nice_step(m, 5) * ceil(m / nice_step(m, 5)) : 1;
}

int kvp_svg_lines2(const char *path, int force, const char *title, const char *xlabel,
                   const double *x, size_t n, const double *const *y,
                   const char *const *labels, kvp_error *err)
{
    if (n < 2 || !(x[n - 1] > x[0]))
        return kvp_fail(err, KVP_EUSAGE, "%s: a chart needs 2+ points over a range of x", path);
    FILE *f = open_out(path, force, err);
    if (!f)
        return -1;
    frame fr = {x[0], x[n - 1], {axis_max(y[0], n), axis_max(y[1], n)}, 0};
    header(f, title);
    line_axes(f, &fr, xlabel, labels);
    polyline(f, &fr, x, y[0], n, 0);
    polyline(f, &fr, x, y[1], n, 1);
    fprintf(f, "</svg>\n");
    return fclose(f) ? kvp_fail(err, KVP_EINPUT, "%s: write failed", path) : 0;
}

/* ---- rates in [0, 1] on one axis, a marked x ---- */

int kvp_svg_rates(const char *path, int force, const char *title, const char *xlabel,
                  const double *x, size_t n, const double *const *y,
                  const char *const *labels, size_t n_series, double mark_x,
                  const char *mark_label, kvp_error *err)
{
    if (n < 2 || !(x[n - 1] > x[0]) || n_series < 1 || n_series > 4)
        return kvp_fail(err, KVP_EUSAGE, "%s: a chart needs 2+ points over a range of x", path);
    FILE *f = open_out(path, force, err);
    if (!f)
        return -1;
    /* a range past 20x is drawn on a log scale, where a geometric sweep's
     * points sit evenly */
    frame fr = {x[0], x[n - 1], {1, 1}, x[0] > 0 && x[n - 1] / x[0] > 20};
    const char *ylab[2] = {labels[0], n_series > 1 ? labels[1] : ""};
    header(f, title);
    line_axes(f, &fr, xlabel, ylab);
    for (size_t s = 0; s < n_series; s++)
        polyline(f, &fr, x, y[s], n, (int)s);
    if (mark_x >= x[0] && mark_x <= x[n - 1]) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e15759\" "
                   "stroke-dasharray=\"4 3\"/>\n<text x=\"%.1f\" y=\"%d\" font-family=\"sans-serif\" "
                   "font-size=\"11\" fill=\"#e15759\">",
                fx(&fr, mark_x), T_MARGIN, fx(&fr, mark_x), H - B_MARGIN, fx(&fr, mark_x) + 4,
                T_MARGIN + 12);
        escape(f, mark_label);
        fprintf(f, "</text>\n");
    }
    fprintf(f, "</svg>\n");
    return fclose(f) ? kvp_fail(err, KVP_EINPUT, "%s: write failed", path) : 0;
}
