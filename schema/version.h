/* version.h - the version this build of tunefarm reports and records.
 *
 * One object (version.c) holds it, rebuilt whenever `git describe` changes
 * (the Makefile's build/version.stamp): archives, sessions, exports and the
 * resume check all read this one string, so a partly rebuilt tree cannot
 * record two versions. */
#ifndef TF_VERSION_H
#define TF_VERSION_H

/* "0a1b2c3", "0a1b2c3-dirty" (local changes) or a release's number. */
extern const char tf_version[];

#endif
