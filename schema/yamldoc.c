/* yamldoc.c - load a YAML file into a libyaml tree, safely, and read it with
 * type checks and precise error locations.
 *
 * Loading is two passes over the text. The first runs libyaml's event parser
 * and enforces the limits the tree cannot show afterwards: one document only,
 * no aliases (the document API resolves them into shared nodes, which would let
 * a tiny file expand into a huge walk), at most TF_YDOC_MAX_NODES nodes and
 * TF_YDOC_MAX_DEPTH levels. Only then does yaml_parser_load build the tree, so
 * the tree is always small and acyclic. Syntax errors come from libyaml's own
 * problem / context fields. Readers resolve plain scalars by the YAML 1.2 core
 * schema (so `ten` is a string, `10` an integer, `1e-4` a float) and treat any
 * quoted scalar as a string; each failure names the key, what was expected and
 * what was found, at the node's 1-based line and column. */
#include "yamldoc.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- loading ---------------------------------------------------------------- */

/* Turn libyaml's parser error into a located message. */
static int ydoc_parser_error(const yaml_parser_t *p, const char *file, const char *text,
                             struct tf_error *err)
{
    const char *problem = p->problem ? p->problem : "unknown parser error";
    if (p->error == YAML_MEMORY_ERROR)
        tf_die("libyaml ran out of memory");
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors carry a byte offset, not a mark: count lines ourselves. */
        int line = 1, col = 1;
        for (size_t i = 0; i < p->problem_offset && text[i]; i++) {
            if (text[i] == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        return tf_error_at(err, TF_ERR_SYNTAX, file, line, col,
                           "invalid YAML: %s (byte 0x%02x at offset %zu); files must be UTF-8 "
                           "text",
                           problem, (unsigned)(p->problem_value & 0xff), p->problem_offset);
    }
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->context)
        return tf_error_at(err, TF_ERR_SYNTAX, file, line, col,
                           "invalid YAML: %s (%s that starts at line %d, column %d)", problem,
                           p->context, (int)p->context_mark.line + 1,
                           (int)p->context_mark.column + 1);
    return tf_error_at(err, TF_ERR_SYNTAX, file, line, col, "invalid YAML: %s", problem);
}

/* Event pass: syntax, document count, aliases, node count, depth. */
static int ydoc_prescan(const char *file, const char *text, size_t size, struct tf_error *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        tf_die("libyaml could not initialise a parser");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, size);
    int docs = 0, nodes = 0, depth = 0, rc = -1;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            ydoc_parser_error(&p, file, text, err);
            goto out;
        }
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        yaml_event_type_t type = ev.type;
        int bad = 0;
        switch (type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1)
                bad = tf_error_at(err, TF_ERR_SCHEMA, file, line, col,
                                  "a second YAML document starts here; the file must hold "
                                  "exactly one document (remove the '---' separator)");
            break;
        case YAML_ALIAS_EVENT:
            bad = tf_error_at(err, TF_ERR_SCHEMA, file, line, col,
                              "YAML aliases are not supported (found '*%s'); write the value "
                              "out in full",
                              ev.data.alias.anchor ? (const char *)ev.data.alias.anchor : "");
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > TF_YDOC_MAX_DEPTH)
                bad = tf_error_at(err, TF_ERR_SCHEMA, file, line, col,
                                  "YAML nested more than %d levels deep", TF_YDOC_MAX_DEPTH);
            /* fall through */
        case YAML_SCALAR_EVENT:
            if (!bad && ++nodes > TF_YDOC_MAX_NODES)
                bad = tf_error_at(err, TF_ERR_SCHEMA, file, line, col,
                                  "YAML document has more than %d nodes", TF_YDOC_MAX_NODES);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
        if (bad)
            goto out;
        if (type == YAML_STREAM_END_EVENT)
            break;
    }
    rc = 0;
out:
    yaml_parser_delete(&p);
    return rc;
}

int tf_ydoc_load(struct tf_ydoc *d, const char *file, const char *text, size_t size,
                 struct tf_error *err)
{
    memset(d, 0, sizeof *d);
    d->file = file;
    if (ydoc_prescan(file, text, size, err) != 0)
        return -1;

    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        tf_die("libyaml could not initialise a parser");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, size);
    if (!yaml_parser_load(&p, &d->doc)) {
        ydoc_parser_error(&p, file, text, err);
        yaml_parser_delete(&p);
        return -1;
    }
    yaml_parser_delete(&p);
    d->loaded = true;

    yaml_node_t *root = yaml_document_get_root_node(&d->doc);
    if (root == NULL) {
        tf_error_at(err, TF_ERR_SCHEMA, file, 1, 1,
                    "the file is empty; expected a YAML mapping of keys ('name: ...')");
        goto fail;
    }
    if (root->type != YAML_MAPPING_NODE) {
        char buf[96];
        tf_ydoc_fail(d, root, err, TF_ERR_SCHEMA,
                     "the top level must be a mapping of keys ('name: ...'), found %s",
                     tf_ydoc_describe(root, buf, sizeof buf));
        goto fail;
    }
    return 0;
fail:
    tf_ydoc_free(d);
    return -1;
}

void tf_ydoc_free(struct tf_ydoc *d)
{
    if (d == NULL || !d->loaded)
        return;
    yaml_document_delete(&d->doc);
    d->loaded = false;
}

yaml_node_t *tf_ydoc_root(struct tf_ydoc *d)
{
    return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

/* ---- locations and messages ---------------------------------------------------- */

int tf_ydoc_line(const yaml_node_t *n)
{
    return n ? (int)n->start_mark.line + 1 : 0;
}

int tf_ydoc_column(const yaml_node_t *n)
{
    return n ? (int)n->start_mark.column + 1 : 0;
}

int tf_ydoc_fail(const struct tf_ydoc *d, const yaml_node_t *n, struct tf_error *err,
                 enum tf_error_code code, const char *fmt, ...)
{
    char msg[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tf_error_at(err, code, d->file, tf_ydoc_line(n), tf_ydoc_column(n), "%s", msg);
}

const char *tf_ydoc_describe(const yaml_node_t *n, char *buf, size_t cap)
{
    if (n == NULL) {
        snprintf(buf, cap, "nothing");
        return buf;
    }
    if (n->type == YAML_MAPPING_NODE) {
        snprintf(buf, cap, "a mapping");
        return buf;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        snprintf(buf, cap, "a list");
        return buf;
    }
    if (n->type != YAML_SCALAR_NODE) {
        snprintf(buf, cap, "an empty node");
        return buf;
    }
    const char *text = (const char *)n->data.scalar.value;
    /* Quote at most 40 bytes: enough to recognise, short enough for one line. */
    int shown = (int)strnlen(text, 40);
    const char *more = text[shown] ? "..." : "";
    switch (tf_ydoc_kind(n)) {
    case TF_YS_NULL:
        snprintf(buf, cap, "%s", text[0] ? "null" : "an empty value");
        break;
    case TF_YS_BOOL:
        snprintf(buf, cap, "boolean %.*s", shown, text);
        break;
    case TF_YS_INT:
        snprintf(buf, cap, "integer %.*s%s", shown, text, more);
        break;
    case TF_YS_FLOAT:
        snprintf(buf, cap, "number %.*s%s", shown, text, more);
        break;
    default:
        snprintf(buf, cap, "string '%.*s%s'", shown, text, more);
        break;
    }
    return buf;
}

/* ---- structure ---------------------------------------------------------------- */

int tf_ydoc_map_size(const yaml_node_t *map)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE)
        return 0;
    return (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

yaml_node_t *tf_ydoc_map_key(struct tf_ydoc *d, const yaml_node_t *map, int i)
{
    if (i < 0 || i >= tf_ydoc_map_size(map))
        return NULL;
    return yaml_document_get_node(&d->doc, map->data.mapping.pairs.start[i].key);
}

yaml_node_t *tf_ydoc_map_value(struct tf_ydoc *d, const yaml_node_t *map, int i)
{
    if (i < 0 || i >= tf_ydoc_map_size(map))
        return NULL;
    return yaml_document_get_node(&d->doc, map->data.mapping.pairs.start[i].value);
}

static int ydoc_find(struct tf_ydoc *d, const yaml_node_t *map, const char *key)
{
    int n = tf_ydoc_map_size(map);
    for (int i = 0; i < n; i++) {
        const char *k = tf_ydoc_text(tf_ydoc_map_key(d, map, i));
        if (k && strcmp(k, key) == 0)
            return i;
    }
    return -1;
}

yaml_node_t *tf_ydoc_get(struct tf_ydoc *d, const yaml_node_t *map, const char *key)
{
    int i = ydoc_find(d, map, key);
    return i < 0 ? NULL : tf_ydoc_map_value(d, map, i);
}

yaml_node_t *tf_ydoc_get_key(struct tf_ydoc *d, const yaml_node_t *map, const char *key)
{
    int i = ydoc_find(d, map, key);
    return i < 0 ? NULL : tf_ydoc_map_key(d, map, i);
}

int tf_ydoc_seq_size(const yaml_node_t *seq)
{
    if (seq == NULL || seq->type != YAML_SEQUENCE_NODE)
        return 0;
    return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

yaml_node_t *tf_ydoc_seq_item(struct tf_ydoc *d, const yaml_node_t *seq, int i)
{
    if (i < 0 || i >= tf_ydoc_seq_size(seq))
        return NULL;
    return yaml_document_get_node(&d->doc, seq->data.sequence.items.start[i]);
}

int tf_ydoc_edit_distance(const char *a, const char *b, int cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return cap + 1;
    int row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best = row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best)
                best = v;
        }
        if (best > cap)
            return cap + 1;
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}

void tf_ydoc_nearer(const char *word, const char *cand, const char **best, int *best_d)
{
    int d = tf_ydoc_edit_distance(word, cand, 2);
    size_t n = strlen(word);
    if (d > 1 && n == strlen(cand)) {
        bool caseless = true;
        for (size_t i = 0; i < n && caseless; i++)
            caseless = tolower((unsigned char)word[i]) == tolower((unsigned char)cand[i]);
        if (caseless)
            d = 1;
    }
    /* A 2-letter word is 2 edits from every other 2-letter word: only suggest
     * when the edit is small relative to the word. */
    if (d <= 2 && d < (int)n && d < *best_d)
        *best_d = d, *best = cand;
}

/* Scalar text with no embedded NUL (a "\0" escape would make C strings lie). */
static bool ydoc_clean_scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE &&
           strlen((const char *)n->data.scalar.value) == n->data.scalar.length;
}

int tf_ydoc_check_keys(struct tf_ydoc *d, const yaml_node_t *map, const char *what,
                       const char *const *allowed, struct tf_error *err)
{
    char buf[96];
    int n = tf_ydoc_map_size(map);
    for (int i = 0; i < n; i++) {
        yaml_node_t *kn = tf_ydoc_map_key(d, map, i);
        if (!ydoc_clean_scalar(kn) || tf_ydoc_kind(kn) == TF_YS_NULL)
            return tf_ydoc_fail(d, kn, err, TF_ERR_SCHEMA,
                                "keys of %s must be plain names, found %s", what,
                                tf_ydoc_describe(kn, buf, sizeof buf));
        const char *key = tf_ydoc_text(kn);
        for (int j = 0; j < i; j++) {
            yaml_node_t *prev = tf_ydoc_map_key(d, map, j);
            if (strcmp(tf_ydoc_text(prev), key) == 0)
                return tf_ydoc_fail(d, kn, err, TF_ERR_SCHEMA,
                                    "duplicate key '%s' in %s (first given at line %d)", key,
                                    what, tf_ydoc_line(prev));
        }
        if (allowed == NULL || allowed[0] == NULL)
            continue;
        const char *best = NULL;
        int best_d = INT_MAX;
        bool known = false;
        for (int a = 0; allowed[a]; a++) {
            if (strcmp(allowed[a], key) == 0) {
                known = true;
                break;
            }
            tf_ydoc_nearer(key, allowed[a], &best, &best_d);
        }
        if (known)
            continue;
        char list[512] = "";
        size_t used = 0;
        for (int a = 0; allowed[a] && used < sizeof list; a++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", a ? ", " : "",
                                     allowed[a]);
        if (best)
            return tf_ydoc_fail(d, kn, err, TF_ERR_SCHEMA,
                                "unknown key '%s' in %s; did you mean '%s'? (expected one of: "
                                "%s)",
                                key, what, best, list);
        return tf_ydoc_fail(d, kn, err, TF_ERR_SCHEMA,
                            "unknown key '%s' in %s (expected one of: %s)", key, what, list);
    }
    return 0;
}

int tf_ydoc_require(struct tf_ydoc *d, const yaml_node_t *map, const char *key,
                    const char *what, const char *hint, struct tf_error *err)
{
    if (ydoc_find(d, map, key) >= 0)
        return 0;
    if (hint)
        return tf_ydoc_fail(d, map, err, TF_ERR_SCHEMA, "%s has no '%s' (%s)", what, key, hint);
    return tf_ydoc_fail(d, map, err, TF_ERR_SCHEMA, "%s has no '%s'", what, key);
}

int tf_ydoc_expect_map(struct tf_ydoc *d, const yaml_node_t *n, const char *name,
                       struct tf_error *err)
{
    char buf[96];
    if (n && n->type == YAML_MAPPING_NODE)
        return 0;
    return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' must be a mapping, found %s", name,
                        tf_ydoc_describe(n, buf, sizeof buf));
}

int tf_ydoc_expect_seq(struct tf_ydoc *d, const yaml_node_t *n, const char *name,
                       struct tf_error *err)
{
    char buf[96];
    if (n && n->type == YAML_SEQUENCE_NODE)
        return 0;
    return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' must be a list, found %s", name,
                        tf_ydoc_describe(n, buf, sizeof buf));
}

/* ---- scalars ------------------------------------------------------------------ */

const char *tf_ydoc_text(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

bool tf_ydoc_quoted(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE &&
           (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
            n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

static bool all_in(const char *s, const char *set)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (!strchr(set, *s))
            return false;
    return true;
}

/* Core-schema float: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? or .inf / .nan. */
static bool is_core_float(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF"))
        return true;
    if (p == s && (!strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN")))
        return true;
    int digits = 0;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return false;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

int tf_ydoc_kind(const yaml_node_t *n)
{
    if (n == NULL || n->type != YAML_SCALAR_NODE)
        return -1;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
        n->data.scalar.style != YAML_ANY_SCALAR_STYLE)
        return TF_YS_STRING;
    const char *s = (const char *)n->data.scalar.value;
    if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
        !strcmp(s, "NULL"))
        return TF_YS_NULL;
    if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE") || !strcmp(s, "false") ||
        !strcmp(s, "False") || !strcmp(s, "FALSE"))
        return TF_YS_BOOL;
    const char *p = s + (*s == '+' || *s == '-');
    if (all_in(p, "0123456789"))
        return TF_YS_INT;
    if (p == s && !strncmp(s, "0o", 2) && all_in(s + 2, "01234567"))
        return TF_YS_INT;
    if (p == s && !strncmp(s, "0x", 2) && all_in(s + 2, "0123456789abcdefABCDEF"))
        return TF_YS_INT;
    if (is_core_float(s))
        return TF_YS_FLOAT;
    return TF_YS_STRING;
}

int tf_ydoc_string(struct tf_ydoc *d, const yaml_node_t *n, const char *name, const char **out,
                   struct tf_error *err)
{
    char buf[96];
    int kind = tf_ydoc_kind(n);
    if (kind < 0 || kind == TF_YS_NULL)
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' must be a string, found %s", name,
                            tf_ydoc_describe(n, buf, sizeof buf));
    if (!ydoc_clean_scalar(n))
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' contains a NUL character", name);
    *out = tf_ydoc_text(n);
    return 0;
}

int tf_ydoc_int(struct tf_ydoc *d, const yaml_node_t *n, const char *name, int64_t *out,
                struct tf_error *err)
{
    char buf[96];
    if (tf_ydoc_kind(n) != TF_YS_INT)
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' must be an integer, found %s",
                            name, tf_ydoc_describe(n, buf, sizeof buf));
    const char *s = tf_ydoc_text(n);
    int base = 10;
    if (!strncmp(s, "0o", 2))
        base = 8, s += 2;
    else if (!strncmp(s, "0x", 2))
        base = 16, s += 2;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, base);
    if (errno == ERANGE || *end != '\0')
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA,
                            "'%s' is out of range for a 64-bit integer (found %s)", name,
                            tf_ydoc_describe(n, buf, sizeof buf));
    *out = (int64_t)v;
    return 0;
}

int tf_ydoc_number(struct tf_ydoc *d, const yaml_node_t *n, const char *name, double *out,
                   struct tf_error *err)
{
    char buf[96];
    int kind = tf_ydoc_kind(n);
    if (kind == TF_YS_INT) {
        int64_t v;
        if (tf_ydoc_int(d, n, name, &v, err) != 0)
            return -1;
        *out = (double)v;
        return 0;
    }
    if (kind != TF_YS_FLOAT)
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' must be a number, found %s", name,
                            tf_ydoc_describe(n, buf, sizeof buf));
    const char *s = tf_ydoc_text(n);
    const char *p = s + (*s == '+' || *s == '-');
    if (p[0] == '.' && (p[1] == 'i' || p[1] == 'I'))
        *out = *s == '-' ? -HUGE_VAL : HUGE_VAL;
    else if (p[0] == '.' && (p[1] == 'n' || p[1] == 'N'))
        *out = NAN;
    else
        *out = strtod(s, NULL);
    return 0;
}

int tf_ydoc_bool(struct tf_ydoc *d, const yaml_node_t *n, const char *name, bool *out,
                 struct tf_error *err)
{
    char buf[96];
    if (tf_ydoc_kind(n) != TF_YS_BOOL)
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA, "'%s' must be true or false, found %s",
                            name, tf_ydoc_describe(n, buf, sizeof buf));
    const char *s = tf_ydoc_text(n);
    *out = s[0] == 't' || s[0] == 'T';
    return 0;
}

bool tf_ydoc_is_ident(const char *s)
{
    if (s == NULL || !((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

int tf_ydoc_ident(struct tf_ydoc *d, const yaml_node_t *n, const char *name, const char **out,
                  struct tf_error *err)
{
    char buf[96];
    const char *s;
    if (tf_ydoc_string(d, n, name, &s, err) != 0)
        return -1;
    if (!tf_ydoc_is_ident(s))
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA,
                            "'%s' must be an identifier (letters, digits and '_', not starting "
                            "with a digit), found %s",
                            name, tf_ydoc_describe(n, buf, sizeof buf));
    /* Names become archive attribute names and exports' keys (255 bytes at most). */
    if (strlen(s) > 255)
        return tf_ydoc_fail(d, n, err, TF_ERR_SCHEMA,
                            "'%s' is %zu bytes long: at most 255 (an archive keeps names of at "
                            "most 255 bytes); shorten it",
                            name, strlen(s));
    *out = s;
    return 0;
}
