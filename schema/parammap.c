/* parammap.c - configurations of one parameter space as configurations of
 * another (see parammap.h).
 *
 * A space is copied into a neutral form: per parameter its name, its values
 * as text and, where every value is a number, as numbers. A map keeps, per
 * parameter of `from`, the parameter of `to` of its name (or -1: ignored) and
 * a table from `from`'s digits to `to`'s (-1: no such value there), and the
 * place value (stride) of each parameter of `to`. Applying it peels `from`'s
 * digits off the index from the last parameter up and adds each mapped digit
 * times its stride: no scratch array, so any number of parameters. */
#include "parammap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pm_param {
    char *name;
    int count;
    char **text;
    double *number;   /* NULL: not every value is a number */
};

struct tf_parammap_space {
    char *label;
    int n;
    struct pm_param *p;
};

struct tf_parammap {
    int nfrom;
    int *radix;       /* per `from` parameter: its value count */
    int *to;          /* per `from` parameter: the `to` parameter of its name, -1: none */
    int **digit;      /* per `from` parameter with a `to`: from digit -> to digit, -1: none */
    uint64_t *stride; /* per `from` parameter with a `to`: the place value of that `to` digit */
};

void tf_param_value_text(const struct tf_param *p, int d, char *out, size_t cap)
{
    if (p->kind == TF_PARAM_INT)
        snprintf(out, cap, "%lld", (long long)p->ints[d]);
    else
        snprintf(out, cap, "%s", p->strings[d]);
}

int tf_config_cmp(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static struct tf_parammap_space *space_new(int n, const char *label)
{
    struct tf_parammap_space *s = tf_xcalloc(1, sizeof *s);
    s->label = tf_xstrdup(label);
    s->n = n;
    s->p = tf_xcalloc((size_t)(n > 0 ? n : 1), sizeof *s->p);
    return s;
}

struct tf_parammap_space *tf_parammap_space_params(const struct tf_param *p, int n,
                                                   const char *label)
{
    struct tf_parammap_space *s = space_new(n, label);
    for (int i = 0; i < n; i++) {
        struct pm_param *q = &s->p[i];
        q->name = tf_xstrdup(p[i].name);
        q->count = p[i].count;
        q->text = tf_xcalloc((size_t)(q->count > 0 ? q->count : 1), sizeof *q->text);
        if (p[i].kind == TF_PARAM_INT)
            q->number = tf_xcalloc((size_t)(q->count > 0 ? q->count : 1), sizeof *q->number);
        for (int d = 0; d < q->count; d++) {
            char v[256];
            tf_param_value_text(&p[i], d, v, sizeof v);
            q->text[d] = tf_xstrdup(v);
            if (q->number)
                q->number[d] = (double)p[i].ints[d];
        }
    }
    return s;
}

struct tf_parammap_space *tf_parammap_space_ktcache(const struct tf_ktcache *c, const char *label)
{
    struct tf_parammap_space *s = space_new(c->nparams, label);
    for (int i = 0; i < c->nparams; i++) {
        const struct tf_ktcache_param *k = &c->params[i];
        struct pm_param *q = &s->p[i];
        q->name = tf_xstrdup(k->name);
        q->count = k->count;
        q->text = tf_xcalloc((size_t)(q->count > 0 ? q->count : 1), sizeof *q->text);
        for (int d = 0; d < q->count; d++)
            q->text[d] = tf_xstrdup(k->text[d]);
        if (k->values) {
            q->number = tf_xmalloc(sizeof *q->number * (size_t)(q->count > 0 ? q->count : 1));
            memcpy(q->number, k->values, sizeof *q->number * (size_t)q->count);
        }
    }
    return s;
}

void tf_parammap_space_destroy(struct tf_parammap_space *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->n; i++) {
        for (int d = 0; d < s->p[i].count; d++)
            free(s->p[i].text[d]);
        free(s->p[i].text);
        free(s->p[i].number);
        free(s->p[i].name);
    }
    free(s->p);
    free(s->label);
    free(s);
}

int tf_parammap_space_nparams(const struct tf_parammap_space *s)
{
    return s->n;
}

void tf_parammap_destroy(struct tf_parammap *m)
{
    if (m == NULL)
        return;
    for (int r = 0; r < m->nfrom; r++)
        free(m->digit[r]);
    free(m->digit);
    free(m->stride);
    free(m->to);
    free(m->radix);
    free(m);
}

/* Value i of `a` and value j of `b` are one value: the same text, or the
 * same number where both are numbers (16.0 and 16), below 2^53, where
 * doubles hold every integer. Not at 2^53 itself: the int 2^53 + 1 becomes
 * that double too. */
static bool same_value(const struct pm_param *a, int i, const struct pm_param *b, int j)
{
    if (strcmp(a->text[i], b->text[j]) == 0)
        return true;
    return a->number && b->number && isfinite(a->number[i]) &&
           fabs(a->number[i]) < 9007199254740992.0 && a->number[i] == b->number[j];
}

/* The parameter of `s` named `name`, or -1. */
static int find_param(const struct tf_parammap_space *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->p[i].name, name) == 0)
            return i;
    return -1;
}

/* Refuse a space with two parameters of one name. */
static int check_names(const struct tf_parammap_space *s, struct tf_error *err)
{
    for (int i = 0; i < s->n; i++)
        if (find_param(s, s->p[i].name) != i)
            return tf_error_set(err, TF_ERR_SCHEMA,
                                "%s has two parameters named '%s': which one a configuration's "
                                "value belongs to cannot be told",
                                s->label, s->p[i].name);
    return 0;
}

/* "16, 32, 64": the values of `p`, as much as fits in out[cap]. */
static void values_text(const struct pm_param *p, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    for (int d = 0; d < p->count; d++) {
        int w = snprintf(out + used, cap - used, "%s%s", d ? ", " : "", p->text[d]);
        if (w < 0 || (size_t)w >= cap - used) {
            if (cap > 4)
                strcpy(out + cap - 4, "...");
            return;
        }
        used += (size_t)w;
    }
}

/* An exact map: same parameters, and each one's values one to one. */
static int check_exact(const struct tf_parammap *m, const struct tf_parammap_space *from,
                       const struct tf_parammap_space *to, struct tf_error *err)
{
    if (from->n != to->n)
        return tf_error_set(err, TF_ERR_SCHEMA, "%s has %d parameters, %s %d", from->label,
                            from->n, to->label, to->n);
    for (int r = 0; r < from->n; r++) {
        const struct pm_param *a = &from->p[r], *b = &to->p[m->to[r]];
        bool ok = a->count == b->count;
        char *used = tf_xcalloc((size_t)(b->count > 0 ? b->count : 1), 1);
        for (int i = 0; i < a->count && ok; i++) {
            const int j = m->digit[r][i];
            ok = j >= 0 && !used[j];
            if (ok)
                used[j] = 1;
        }
        free(used);
        if (!ok) {
            char va[512], vb[512];
            values_text(b, vb, sizeof vb);
            values_text(a, va, sizeof va);
            return tf_error_set(err, TF_ERR_SCHEMA, "parameter '%s' has the values [%s] in %s "
                                "but [%s] in %s", a->name, vb, to->label, va, from->label);
        }
    }
    return 0;
}

struct tf_parammap *tf_parammap_create(const struct tf_parammap_space *from,
                                       const struct tf_parammap_space *to, bool exact,
                                       struct tf_error *err)
{
    if (check_names(from, err) || check_names(to, err))
        return NULL;
    struct tf_parammap *m = tf_xcalloc(1, sizeof *m);
    const size_t nf = (size_t)(from->n > 0 ? from->n : 1);
    m->nfrom = from->n;
    m->radix = tf_xcalloc(nf, sizeof *m->radix);
    m->to = tf_xcalloc(nf, sizeof *m->to);
    m->digit = tf_xcalloc(nf, sizeof *m->digit);
    m->stride = tf_xcalloc(nf, sizeof *m->stride);
    for (int r = 0; r < from->n; r++) {
        m->radix[r] = from->p[r].count;
        m->to[r] = find_param(to, from->p[r].name);
    }
    /* Place values of `to`'s digits, last parameter 1. */
    uint64_t place = 1;
    for (int q = to->n - 1; q >= 0; q--) {
        const int r = find_param(from, to->p[q].name);
        if (r < 0) {
            tf_error_set(err, TF_ERR_SCHEMA, "%s has parameter '%s', %s has none of that name",
                         to->label, to->p[q].name, from->label);
            goto fail;
        }
        m->stride[r] = place;
        if (to->p[q].count < 1 || place > UINT64_MAX / (uint64_t)to->p[q].count) {
            tf_error_set(err, TF_ERR_SCHEMA, "%s has 2^64 or more configurations", to->label);
            goto fail;
        }
        place *= (uint64_t)to->p[q].count;
    }
    for (int r = 0; r < from->n; r++) {
        if (m->to[r] < 0)
            continue;
        const struct pm_param *a = &from->p[r], *b = &to->p[m->to[r]];
        m->digit[r] = tf_xmalloc(sizeof *m->digit[r] * (size_t)(a->count > 0 ? a->count : 1));
        for (int i = 0; i < a->count; i++) {
            m->digit[r][i] = -1;
            for (int j = 0; j < b->count && m->digit[r][i] < 0; j++)
                if (same_value(a, i, b, j))
                    m->digit[r][i] = j;
        }
    }
    if (exact && check_exact(m, from, to, err))
        goto fail;
    return m;
fail:
    tf_parammap_destroy(m);
    return NULL;
}

bool tf_parammap_apply(const struct tf_parammap *m, uint64_t x, uint64_t *y)
{
    uint64_t out = 0;
    for (int r = m->nfrom - 1; r >= 0; r--) {
        if (m->radix[r] < 1)
            return false;
        const int d = (int)(x % (uint64_t)m->radix[r]);
        x /= (uint64_t)m->radix[r];
        if (m->to[r] < 0)
            continue;
        const int e = m->digit[r][d];
        if (e < 0)
            return false;
        out += (uint64_t)e * m->stride[r];
    }
    if (x != 0)
        return false; /* past the end of `from` */
    *y = out;
    return true;
}
