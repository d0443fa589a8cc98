/* ktcache.h - reading a Kernel Tuner cache file (gzip'd or plain JSON).
 *
 * Kernel Tuner's cache (../shared/datasets/README.md) holds `tune_params_keys`
 * (parameter order), `tune_params` (name -> list of values) and `cache`: one
 * object per measured configuration with its parameter values, `time` (ms, or
 * a string naming a failure), `compile_time` and `benchmark_time` (ms). This
 * reader maps it onto tunefarm's identities: each parameter's values in file
 * order are its digits, a configuration is its mixed-radix index (parameter 0
 * most significant, as schema/space.h), and each entry gets a tunefarm status
 * (schema/status.h): InvalidConfig -> invalid, CompilationFailedConfig ->
 * compile_error, RuntimeFailedConfig -> runtime_error, any other failure
 * string -> runtime_error (its text kept). Entries are sorted by index. Zlib
 * reads both gzip'd and plain files; the samples (`times`) give min, median and
 * relative stddev; jansson parses (tf_ktcache_read_json + tf_ktcache_from_json:
 * `tunefarm import` reads the document once and keeps each entry's object for
 * the keys this reader leaves alone). A damaged file (bad gzip,
 * bad JSON, missing fields, a value outside its parameter's list) is refused
 * with an error naming the file, the place and what was expected. */
#ifndef TF_KTCACHE_H
#define TF_KTCACHE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

struct tf_ktcache_entry {
    uint64_t index;          /* mixed-radix configuration index */
    int status;              /* enum tf_status */
    double time_ms;          /* mean kernel time; NaN unless status ok */
    double min_ms, median_ms; /* from `times` (every sample); time_ms where absent */
    double rsd;              /* relative standard deviation of `times`; NaN where absent */
    int samples;             /* entries of `times`; 0 where absent */
    double compile_ms;       /* 0 when absent */
    double benchmark_ms;     /* 0 when absent */
    const char *failure;     /* Kernel Tuner's failure string (NULL when ok); owned by the cache */
    const json_t *object;    /* the entry's object in the document tf_ktcache_from_json read
                                (borrowed: valid while that lives), for keys this reader does
                                not interpret (timestamp, metrics); NULL from tf_ktcache_load */
};

struct tf_ktcache_param {
    char *name;
    int count;
    double *values;          /* numeric values; NULL if any value is not a number */
    char **text;             /* every value as text ("16", "true", "float4") */
    char **key_text;         /* every value as Kernel Tuner writes it in a cache key, Python's
                                str(): "16", "0.5", "1.0", "True", "float4" */
};

struct tf_ktcache {
    char *path;
    char *device_name;
    char *kernel_name;
    char *objective;
    int nparams;
    struct tf_ktcache_param *params;
    uint64_t cartesian;      /* product of the value counts */
    size_t nentries;
    struct tf_ktcache_entry *entries; /* sorted by index, distinct */
    size_t nfailure_names;
    char **failure_names;    /* distinct failure strings (entries point into these) */
};

/* Load `path`. NULL + err on failure. */
struct tf_ktcache *tf_ktcache_load(const char *path, struct tf_error *err);
/* The JSON document in `path` (gzip'd or plain), parsed; NULL + err (file:line:col
 * of a syntax error, saying `expected`, e.g. "a Kernel Tuner cache file") on
 * failure. The caller json_decref()s it. */
json_t *tf_ktcache_read_json(const char *path, const char *expected, struct tf_error *err);
/* The cache in document `root` (read from `path`, named in messages). Entries'
 * `object` point into `root`. NULL + err on failure. */
struct tf_ktcache *tf_ktcache_from_json(const json_t *root, const char *path,
                                        struct tf_error *err);
/* Free; accepts NULL. */
void tf_ktcache_destroy(struct tf_ktcache *c);
/* The position in c->entries of the first entry whose index is `index` or
 * more (c->nentries if none): where a walk of the entries from `index` on
 * starts. */
size_t tf_ktcache_lower_bound(const struct tf_ktcache *c, uint64_t index);
/* The entry of configuration `index`, or NULL if the cache has none. */
const struct tf_ktcache_entry *tf_ktcache_find(const struct tf_ktcache *c, uint64_t index);
/* Status for a Kernel Tuner failure string (see above). */
int tf_ktcache_status_of(const char *failure);

#endif
