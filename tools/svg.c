/* svg.c - small charts as inline SVG (svg.h).
 *
 * Coordinates are written with one decimal; ticks are at 1, 2 and 5 times a
 * power of ten on a linear axis, at powers of ten on a log axis (and 2 and 5
 * times them when the axis spans fewer than three decades). Everything drawn
 * is clamped to the plot area, so an outlier cannot paint over the labels,
 * and nothing that is not finite is ever printed. */
#include "svg.h"

#include <math.h>
#include <string.h>

/* Bytes of the well-formed UTF-8 sequence at `s` (1 to 4), or 0 if it is
 * none (a stray continuation byte, a sequence cut short, an overlong form, a
 * surrogate, beyond U+10FFFF). */
static int utf8_length(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    int n = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 ? 2 : 0;
    if (n == 0 || s[0] > 0xF4)
        return 0;
    unsigned cp = s[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

void tf_html_escape(FILE *out, const char *s)
{
    while (s && *s) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default: {
            /* Control characters other than tab and newline are not HTML
             * text; bytes that are not UTF-8 (the page says it is) become
             * U+FFFD, as a browser would show them, and '?' in the exports. */
            const unsigned char c = (unsigned char)*s;
            int n = utf8_length((const unsigned char *)s);
            if ((c < 32 && c != '\t' && c != '\n') || c == 127) {
                fputc(' ', out);
            } else if (n == 0) {
                fputs("&#xFFFD;", out);
            } else {
                fwrite(s, 1, (size_t)n, out);
                s += n;
                continue;
            }
        }
        }
        s++;
    }
}

const char *tf_svg_colour(int i)
{
    static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                          "#CC79A7", "#56B4E9", "#8C6D1F", "#000000"};
    return palette[(i < 0 ? -i : i) % 8];
}

bool tf_svg_fits(const struct tf_svg_axis *ax, double v)
{
    return isfinite(v) && (!ax->log || v > 0);
}

void tf_svg_axis_fit(struct tf_svg_axis *ax, double lo, double hi, bool allow_log)
{
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0;
        hi = 1;
    }
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    ax->log = allow_log && lo > 0 && hi / lo > 20;
    if (ax->log) {
        double a = log10(lo), b = log10(hi), pad = (b - a) * 0.05;
        ax->lo = pow(10, a - pad);
        ax->hi = pow(10, b + pad);
        return;
    }
    if (hi == lo) { /* one value: a band around it */
        double d = lo != 0 ? fabs(lo) * 0.1 : 1;
        lo -= d;
        hi += d;
    }
    double pad = (hi - lo) * 0.05;
    ax->lo = lo - pad;
    ax->hi = hi + pad;
}

static double frac(const struct tf_svg_axis *ax, double v)
{
    double f = ax->log ? (log10(v) - log10(ax->lo)) / (log10(ax->hi) - log10(ax->lo))
                       : (v - ax->lo) / (ax->hi - ax->lo);
    if (!isfinite(f))
        f = 0;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

double tf_svg_px(const struct tf_svg_chart *c, double v)
{
    return c->left + frac(&c->x, v) * (c->width - c->left - c->right);
}

double tf_svg_py(const struct tf_svg_chart *c, double v)
{
    return c->height - c->bottom - frac(&c->y, v) * (c->height - c->top - c->bottom);
}

/* Tick values of `ax` into t[], at most max; returns how many. */
static int ticks(const struct tf_svg_axis *ax, double *t, int max)
{
    int n = 0;
    if (ax->hidden)
        return 0;
    if (ax->log) {
        int a = (int)floor(log10(ax->lo)), b = (int)ceil(log10(ax->hi));
        static const double fine[] = {1, 2, 5}, coarse[] = {1};
        const double *m = b - a < 3 ? fine : coarse;
        int nm = b - a < 3 ? 3 : 1, every = (b - a) / 8 + 1;
        for (int e = a; e <= b; e++)
            for (int i = 0; i < nm && (e - a) % every == 0; i++) {
                double v = m[i] * pow(10, e);
                if (v >= ax->lo && v <= ax->hi && n < max)
                    t[n++] = v;
            }
        return n;
    }
    double raw = (ax->hi - ax->lo) / 5, mag = pow(10, floor(log10(raw))), step = mag;
    if (!(raw > 0) || !isfinite(mag))
        return 0;
    if (raw / mag > 5)
        step = 10 * mag;
    else if (raw / mag > 2)
        step = 5 * mag;
    else if (raw / mag > 1)
        step = 2 * mag;
    if (ax->integer && step < 1)
        step = 1;
    for (double v = ceil(ax->lo / step) * step; v <= ax->hi && n < max; v += step)
        t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
    return n;
}

static void label(const struct tf_svg_axis *ax, double v, int digits, char *out, int cap)
{
    if (ax->format)
        ax->format(v, digits, out, cap);
    else
        snprintf(out, (size_t)cap, "%.*g", digits, v);
}

/* The fewest significant digits (3 to 8) at which the n ticks' labels differ. */
static int label_digits(const struct tf_svg_axis *ax, const double *t, int n)
{
    int digits = 3;
    for (; digits < 8; digits++) {
        bool distinct = true;
        char a[48], b[48];
        for (int i = 1; i < n && distinct; i++) {
            label(ax, t[i - 1], digits, a, sizeof a);
            label(ax, t[i], digits, b, sizeof b);
            distinct = strcmp(a, b) != 0;
        }
        if (distinct)
            break;
    }
    return digits;
}

void tf_svg_begin(struct tf_svg_chart *c, FILE *out, double width, double height,
                  const char *title)
{
    c->out = out;
    c->width = width;
    c->height = height;
    if (c->left == 0 && c->right == 0 && c->top == 0 && c->bottom == 0) {
        c->left = 72;
        c->right = 12;
        c->top = 14;
        c->bottom = 40;
    }
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
            "height=\"%.0f\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\"><title>",
            width, height, width, height);
    tf_html_escape(out, title);
    fputs("</title>\n", out);
    double x0 = c->left, x1 = width - c->right, y0 = c->top, y1 = height - c->bottom;
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fff\" "
                 "stroke=\"#999\"/>\n",
            x0, y0, x1 - x0, y1 - y0);
    double t[64];
    char buf[48];
    int n = ticks(&c->x, t, 64), digits = label_digits(&c->x, t, n);
    for (int i = 0; i < n; i++) {
        double px = tf_svg_px(c, t[i]);
        label(&c->x, t[i], digits, buf, sizeof buf);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">",
                px, y0, px, y1, px, y1 + 13);
        tf_html_escape(out, buf);
        fputs("</text>\n", out);
    }
    n = ticks(&c->y, t, 64);
    digits = label_digits(&c->y, t, n);
    for (int i = 0; i < n; i++) {
        double py = tf_svg_py(c, t[i]);
        label(&c->y, t[i], digits, buf, sizeof buf);
        fprintf(out,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">",
                x0, py, x1, py, x0 - 4, py + 4);
        tf_html_escape(out, buf);
        fputs("</text>\n", out);
    }
    if (c->x.label) {
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#222\">",
                (x0 + x1) / 2, height - 6);
        tf_html_escape(out, c->x.label);
        fputs("</text>\n", out);
    }
    if (c->y.label) {
        fprintf(out,
                "<text transform=\"translate(12 %.1f) rotate(-90)\" text-anchor=\"middle\" "
                "fill=\"#222\">",
                (y0 + y1) / 2);
        tf_html_escape(out, c->y.label);
        fputs("</text>\n", out);
    }
}

void tf_svg_end(struct tf_svg_chart *c)
{
    fputs("</svg>\n", c->out);
}

static void tip_close(FILE *out, const char *element, const char *tip)
{
    if (tip) {
        fputs("><title>", out);
        tf_html_escape(out, tip);
        fprintf(out, "</title></%s>\n", element);
    } else {
        fputs("/>\n", out);
    }
}

void tf_svg_dot(struct tf_svg_chart *c, double x, double y, double r, const char *colour,
                const char *tip)
{
    if (!tf_svg_fits(&c->x, x) || !tf_svg_fits(&c->y, y))
        return;
    fprintf(c->out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"", tf_svg_px(c, x),
            tf_svg_py(c, y), r, colour);
    tip_close(c->out, "circle", tip);
}

void tf_svg_line(struct tf_svg_chart *c, const double *x, const double *y, int n, bool step,
                 const char *colour, double width, const char *tip)
{
    int drawn = 0;
    double last_py = 0;
    for (int i = 0; i < n; i++) {
        if (!tf_svg_fits(&c->x, x[i]) || !tf_svg_fits(&c->y, y[i]))
            continue;
        double px = tf_svg_px(c, x[i]), py = tf_svg_py(c, y[i]);
        if (drawn == 0)
            fprintf(c->out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" "
                            "points=\"",
                    colour, width);
        else if (step)
            fprintf(c->out, " %.1f,%.1f", px, last_py);
        fprintf(c->out, "%s%.1f,%.1f", drawn ? " " : "", px, py);
        last_py = py;
        drawn++;
    }
    if (drawn == 0)
        return;
    fputc('"', c->out);
    tip_close(c->out, "polyline", tip);
}

void tf_svg_vline(struct tf_svg_chart *c, double x, const char *colour, const char *label)
{
    if (!tf_svg_fits(&c->x, x))
        return;
    double px = tf_svg_px(c, x);
    fprintf(c->out,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>\n",
            px, c->top, px, c->height - c->bottom, colour);
    if (label) {
        bool right = px > (c->left + c->width - c->right) / 2;
        tf_svg_text(c, px + (right ? -3 : 3), c->top + 11, right ? "end" : "start", colour,
                    label);
    }
}

void tf_svg_bar(struct tf_svg_chart *c, double x0, double y0, double x1, double y1,
                const char *colour, const char *tip)
{
    if (!tf_svg_fits(&c->x, x0) || !tf_svg_fits(&c->x, x1) || !tf_svg_fits(&c->y, y0) ||
        !tf_svg_fits(&c->y, y1))
        return;
    double a = tf_svg_px(c, x0), b = tf_svg_px(c, x1), p = tf_svg_py(c, y0), q = tf_svg_py(c, y1);
    fprintf(c->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"",
            fmin(a, b), fmin(p, q), fabs(b - a), fabs(q - p), colour);
    tip_close(c->out, "rect", tip);
}

void tf_svg_text(struct tf_svg_chart *c, double px, double py, const char *anchor,
                 const char *colour, const char *text)
{
    if (!isfinite(px) || !isfinite(py))
        return;
    fprintf(c->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\">", px, py,
            anchor, colour);
    tf_html_escape(c->out, text);
    fputs("</text>\n", c->out);
}

void tf_svg_legend(struct tf_svg_chart *c, int i, const char *colour, const char *text)
{
    double x = c->width - c->right - 8, y = c->top + 14 + 14 * i;
    fprintf(c->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>",
            x - 10, y - 9, colour);
    tf_svg_text(c, x - 14, y, "end", "#222", text);
}
