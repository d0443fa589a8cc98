/* backends.c - the table of backends compiled into this binary.
 *
 * Each backend is a const descriptor in its own file; this table is the one
 * place that lists them, so discovery, the runner and the compile pool find a
 * backend by name without knowing which exist. A backend whose vendor runtime
 * is missing on a node is still listed: its probe() says it is unusable. */
#include "backend.h"

#include <string.h>

const struct tf_backend *const tf_backends[] = {
    &tf_backend_cuda, /* GPUs first: a worker prefers a GPU over the host CPU */
    &tf_backend_hip,
    &tf_backend_host,
    &tf_backend_replay, /* offers devices only while a replay source is set (--replay) */
    NULL,
};

const struct tf_backend *tf_backend_find(const char *name)
{
    for (int i = 0; tf_backends[i] != NULL; i++)
        if (strcmp(tf_backends[i]->name, name) == 0)
            return tf_backends[i];
    return NULL;
}
