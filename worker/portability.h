/* portability.h - the device-side header every GPU kernel includes as "tunefarm.h".
 *
 * GPU kernels are one CUDA C++ source for both vendors; whatever differs
 * between NVIDIA (NVRTC) and AMD (hipRTC) - warp width, shuffles, warp
 * barriers, launch bounds, fast math - goes through the macros of this
 * header, whose text the backend hands to the runtime compiler as the
 * include file "tunefarm.h". */
#ifndef TF_PORTABILITY_H
#define TF_PORTABILITY_H

/* The text of "tunefarm.h" for `backend` ("cuda" or "hip"); a static string,
 * never freed. NULL for any other backend (host C kernels do not use it). */
const char *tf_portability_header(const char *backend);

#endif
