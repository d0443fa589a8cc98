/* yamldoc.h - a small, defensive helper over libyaml's document API.
 *
 * The kernel and job loaders read YAML as a tree (yaml_parser_load) and walk it
 * with these helpers, which check every node's type before use and report every
 * problem as file:line:column (1-based, from the node's start mark) with a
 * message saying what was expected and what was found. Scalars follow the YAML
 * 1.2 core schema: a plain scalar may be null, a bool, an int or a float; a
 * quoted or block scalar is always a string. Tags are ignored.
 *
 * Limits that keep hostile input bounded: exactly one document, a mapping at the
 * root, no aliases, at most TF_YDOC_MAX_NODES nodes and TF_YDOC_MAX_DEPTH levels. */
#ifndef TF_YAMLDOC_H
#define TF_YAMLDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "error.h"

#define TF_YDOC_MAX_NODES 10000
#define TF_YDOC_MAX_DEPTH 64

/* A loaded document; `file` is borrowed and names the input in every error. */
struct tf_ydoc {
    yaml_document_t doc;
    bool loaded;
    const char *file;
};

/* What a plain scalar resolves to (quoted and block scalars are always strings). */
enum tf_yscalar { TF_YS_NULL, TF_YS_BOOL, TF_YS_INT, TF_YS_FLOAT, TF_YS_STRING };

/* Parse `text` (`size` bytes) from `file` into `d`; -1 + err unless it is one document
 * whose root is a mapping. On success release with tf_ydoc_free. */
int tf_ydoc_load(struct tf_ydoc *d, const char *file, const char *text, size_t size,
                 struct tf_error *err);
/* Release a document; accepts a zeroed or already-freed one. */
void tf_ydoc_free(struct tf_ydoc *d);
/* The root node (a mapping, after a successful load). */
yaml_node_t *tf_ydoc_root(struct tf_ydoc *d);

/* 1-based line / column of a node's start; 0 for NULL. */
int tf_ydoc_line(const yaml_node_t *n);
int tf_ydoc_column(const yaml_node_t *n);
/* Fill err at node `n` (NULL: no line/column) with a printf message; returns -1. */
int tf_ydoc_fail(const struct tf_ydoc *d, const yaml_node_t *n, struct tf_error *err,
                 enum tf_error_code code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Describe a node for messages ("a list", "a mapping", "string 'ten'", "integer 5", "null"). */
const char *tf_ydoc_describe(const yaml_node_t *n, char *buf, size_t cap);

/* Mapping access, bounds-checked; NULL if `map` is not a mapping or i is out of range. */
int tf_ydoc_map_size(const yaml_node_t *map);
yaml_node_t *tf_ydoc_map_key(struct tf_ydoc *d, const yaml_node_t *map, int i);
yaml_node_t *tf_ydoc_map_value(struct tf_ydoc *d, const yaml_node_t *map, int i);
/* The value (or key node) for scalar key `key`, NULL if absent. */
yaml_node_t *tf_ydoc_get(struct tf_ydoc *d, const yaml_node_t *map, const char *key);
yaml_node_t *tf_ydoc_get_key(struct tf_ydoc *d, const yaml_node_t *map, const char *key);
/* Sequence access, bounds-checked. */
int tf_ydoc_seq_size(const yaml_node_t *seq);
yaml_node_t *tf_ydoc_seq_item(struct tf_ydoc *d, const yaml_node_t *seq, int i);

/* Check that every key of `map` is a scalar, appears once and is in the NULL-terminated
 * `allowed` list (empty `allowed`: any name); `what` names the mapping ("kernel file"). */
int tf_ydoc_check_keys(struct tf_ydoc *d, const yaml_node_t *map, const char *what,
                       const char *const *allowed, struct tf_error *err);
/* -1 + "<what> has no '<key>' (<hint>)" at the mapping unless `key` is present. */
int tf_ydoc_require(struct tf_ydoc *d, const yaml_node_t *map, const char *key,
                    const char *what, const char *hint, struct tf_error *err);

/* Type checks: -1 + "'<name>' must be ..., found ..." unless `n` has the type. */
int tf_ydoc_expect_map(struct tf_ydoc *d, const yaml_node_t *n, const char *name,
                       struct tf_error *err);
int tf_ydoc_expect_seq(struct tf_ydoc *d, const yaml_node_t *n, const char *name,
                       struct tf_error *err);

/* The text of a scalar node, NULL if `n` is not a scalar. */
const char *tf_ydoc_text(const yaml_node_t *n);
/* True for a single- or double-quoted scalar. */
bool tf_ydoc_quoted(const yaml_node_t *n);
/* Resolve a scalar by the core schema (TF_YS_STRING for quoted/block; -1 if not a scalar). */
int tf_ydoc_kind(const yaml_node_t *n);
/* Typed readers: 0 and *out, or -1 + err naming `name`. */
int tf_ydoc_string(struct tf_ydoc *d, const yaml_node_t *n, const char *name, const char **out,
                   struct tf_error *err);
int tf_ydoc_int(struct tf_ydoc *d, const yaml_node_t *n, const char *name, int64_t *out,
                struct tf_error *err);
int tf_ydoc_number(struct tf_ydoc *d, const yaml_node_t *n, const char *name, double *out,
                   struct tf_error *err);
int tf_ydoc_bool(struct tf_ydoc *d, const yaml_node_t *n, const char *name, bool *out,
                 struct tf_error *err);
/* An identifier ([A-Za-z_][A-Za-z0-9_]*) scalar; -1 + err naming `name` otherwise. */
int tf_ydoc_ident(struct tf_ydoc *d, const yaml_node_t *n, const char *name, const char **out,
                  struct tf_error *err);
/* True if `s` is an identifier. */
bool tf_ydoc_is_ident(const char *s);
/* Levenshtein distance, capped at `cap` + 1 (for did-you-mean hints). */
int tf_ydoc_edit_distance(const char *a, const char *b, int cap);
/* A did-you-mean step: `cand` replaces *best (distance *best_d; start with
 * NULL and INT_MAX) when it is nearer to `word`, within two edits and fewer
 * than the word's length; a difference of case alone counts as one edit. */
void tf_ydoc_nearer(const char *word, const char *cand, const char **best, int *best_d);

#endif
