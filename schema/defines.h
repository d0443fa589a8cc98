/* defines.h - the names a kernel's compiler defines may take.
 *
 * Every parameter becomes -DNAME=VALUE (and an enum parameter also
 * -DNAME_value=1), defined before anything the compiler reads. A name that
 * the language or the compiler's own headers use as an identifier is then
 * rewritten into a number wherever they use it: `T`, a template parameter of
 * the headers NVRTC includes in every CUDA compile, fails every variant with
 * "expected an identifier" deep inside a builtin header. The kernel loader
 * asks here and refuses such a name at its place, saying why. The lists of
 * header names are evidence: scripts/compiler_names.py tried candidates with
 * NVRTC and hipRTC and kept those that broke the compile (schema/defines.c). */
#ifndef TF_DEFINES_H
#define TF_DEFINES_H

/* Why `name` cannot be a compiler define of a kernel in `language` ("c" or
 * "cuda"): NULL when it can, else a static explanation ("it is a C++ keyword
 * (CUDA kernels are C++)", ...), for a message "... cannot be a compiler
 * define: <why>". */
const char *tf_define_conflict(const char *name, const char *language);

#endif
