/* svg.h - small charts as inline SVG, for a self-contained HTML page.
 *
 * A chart is a plot area inside margins with an x and a y axis, each linear
 * or logarithmic, with ticks at round values and labels written by the
 * caller's formatter. Marks are drawn in data coordinates; a value that is
 * not finite (or not positive on a log axis) is never written into the SVG
 * (a NaN attribute is an error the browser reports), so callers may pass
 * any row's numbers. Every text goes through tf_html_escape: names in an
 * archive are user strings. */
#ifndef TF_SVG_H
#define TF_SVG_H

#include <stdbool.h>
#include <stdio.h>

/* Write `s` escaped for HTML text and attribute values (& < > " '). */
void tf_html_escape(FILE *out, const char *s);

/* Format tick value `v` into out with `digits` significant digits (e.g. "1.5
 * ms"); the chart asks for more digits until neighbouring ticks differ. */
typedef void (*tf_svg_format)(double v, int digits, char *out, int cap);

struct tf_svg_axis {
    double lo, hi;          /* data range shown */
    bool log;               /* logarithmic (lo > 0) */
    const char *label;      /* axis title, escaped when written */
    tf_svg_format format;   /* tick labels; NULL: %g */
    bool integer;           /* ticks at whole numbers only (counts, run numbers) */
    bool hidden;            /* no ticks or grid (the caller labels it) */
};

struct tf_svg_chart {
    FILE *out;
    double width, height;                /* the SVG's size in pixels */
    double left, right, top, bottom;     /* margins around the plot area */
    struct tf_svg_axis x, y;
};

/* Colour i of a colour-blind-safe palette (Okabe-Ito), cycling. */
const char *tf_svg_colour(int i);

/* Fit `ax` to data in [lo, hi] (finite; lo may equal hi): a margin of 5%, and
 * a log scale if `allow_log`, lo > 0 and hi / lo > 20. */
void tf_svg_axis_fit(struct tf_svg_axis *ax, double lo, double hi, bool allow_log);
/* Open the <svg> (width x height, a <title> for screen readers and tooltips)
 * and draw the frame, grid, ticks and axis titles. */
void tf_svg_begin(struct tf_svg_chart *c, FILE *out, double width, double height,
                  const char *title);
/* Close the <svg>. */
void tf_svg_end(struct tf_svg_chart *c);
/* Pixel position of data value v on the x / y axis (clamped to the plot). */
double tf_svg_px(const struct tf_svg_chart *c, double v);
double tf_svg_py(const struct tf_svg_chart *c, double v);
/* True if v can be placed on the axis (finite; positive on a log axis). */
bool tf_svg_fits(const struct tf_svg_axis *ax, double v);
/* A dot at (x, y) of radius r; `tip` (may be NULL) shows on hover. */
void tf_svg_dot(struct tf_svg_chart *c, double x, double y, double r, const char *colour,
                const char *tip);
/* A polyline through n points; `step`: a staircase (each value holds until
 * the next x), as a best-so-far curve is. Points that do not fit are skipped. */
void tf_svg_line(struct tf_svg_chart *c, const double *x, const double *y, int n, bool step,
                 const char *colour, double width, const char *tip);
/* A vertical line at data x over the whole plot, labelled at the top. */
void tf_svg_vline(struct tf_svg_chart *c, double x, const char *colour, const char *label);
/* A bar from data (x0, y0) to (x1, y1) (a rectangle in data coordinates). */
void tf_svg_bar(struct tf_svg_chart *c, double x0, double y0, double x1, double y1,
                const char *colour, const char *tip);
/* Text at pixel (px, py); anchor "start", "middle" or "end". */
void tf_svg_text(struct tf_svg_chart *c, double px, double py, const char *anchor,
                 const char *colour, const char *text);
/* A legend entry (a swatch and a text) at row i of the top-right corner. */
void tf_svg_legend(struct tf_svg_chart *c, int i, const char *colour, const char *text);

#endif
