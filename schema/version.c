/* version.c - the build's version string (version.h); the Makefile passes
 * TF_VERSION to this file and rebuilds it when the version changes. */
#include "version.h"

#ifndef TF_VERSION
#define TF_VERSION "0.1"
#endif

const char tf_version[] = TF_VERSION;
