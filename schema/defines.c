/* defines.c - the names a kernel's compiler defines may not take (defines.h).
 *
 * Four rules and two lists, checked in this order:
 * - reserved identifiers: a double underscore anywhere at the start (`__x`)
 *   or an underscore and a capital letter (`_T`) belong to the compiler and
 *   its headers (C11 7.1.3, C++ [lex.name]); `defined` is the preprocessor's;
 * - keywords: C's for a host kernel, C++'s (with the alternative tokens and
 *   `restrict`) for a CUDA kernel, which NVRTC and hipRTC compile as C++;
 * - CUDA kernels only: the CUDA toolkit's prefixes, `cuda` followed by a
 *   capital, digit or underscore (cudaError_t...), `CUDA` (CUDA_R_32F,
 *   CUDART_VERSION), `CU_` and `CU` followed by a small letter (CUstream_st);
 *   of the 1112 such identifiers in NVRTC 13.0's builtin headers, 885 broke the
 *   compile and the rest are macros that configure the toolkit
 *   (CUDA_API_PER_THREAD_DEFAULT_STREAM) or that a define would silently
 *   replace; HIP's, `hip` followed by a capital, digit or underscore and
 *   `HIP` (17 of a sample of 120 such names from libamdhip64 broke hipRTC);
 *   and `TF_` / `tf_`, the portability header's (tunefarm.h) own;
 * - CUDA kernels only: the names below, which broke an NVRTC compile, or a
 *   hipRTC compile, when defined: a CUDA kernel is one source for both.
 *
 * How the list was made (scripts/compiler_names.py, rerun it for a new CUDA):
 * the candidates were every identifier in the text of libnvrtc-builtins.so
 * (NVRTC keeps its builtin headers there as strings), every identifier of
 * tunefarm.h, the 52 letters and the 936 names [A-Z][A-Z0-9], 4804 in all;
 * kernels/vecadd_cuda/vecadd.cu was compiled with NVRTC 13.0 exactly as
 * worker/backend_cuda.c does (sm_90, -std=c++17, -DBLOCK=256, tunefarm.h in
 * memory) once per candidate with -DNAME=1 added. 1482 failed where the
 * headers are (the builtin header, tunefarm.h, or the kernel's use of
 * TF_GLOBAL and TF_LAUNCH_BOUNDS, which expand to the attributes `global`
 * and `launch_bounds`); the 448 the rules above do not cover are the table.
 * Examples: `T` (template parameter), `x`, `y`, `z`, `w` (vector members),
 * `a`, `b`, `p`, `v`, `size`, `width`, `value` (function parameters),
 * `warpSize`, `threadIdx`, `dim3`. Single capital letters other than `T`, and
 * names like N, M, K, BLOCK or TILE_X, compile fine. tunefarm.h itself uses
 * only tf_-prefixed locals since, so that its helpers take no ordinary name.
 *
 * hipRTC was tried the same way (the script's --hiprtc), ROCm 5.2.3's, the
 * only one here, for gfx90a; at ~0.4 s a compile the candidates were fewer
 * (2586: the letters, the two-character names [A-Z][A-Z0-9] and
 * [a-z][a-z0-9], tunefarm.h's identifiers, common tuning words and the NVRTC
 * table). 258 broke it; the 57 neither the rules nor the NVRTC table cover
 * are the second table: B F R U V (template parameters of the HIP vector
 * types and runtime), c d s n i t u (clang's HIP math declarations),
 * min max abs sqrt pow sin cos... (clang's HIP math functions), half, lane.
 * A host C kernel includes what it likes, so for `c` only the rules apply. */
#include "defines.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Identifiers whose definition broke an NVRTC 13.0 compile of vecadd.cu, the
 * output of scripts/compiler_names.py (4804 candidates, 1482 break the compile,
 * 448 left after the rules), sorted by strcmp for bsearch. */
static const char *const nvrtc_names[] = {
    "ECCEnabled", "MAJOR_VERSION", "MINOR_VERSION", "PATCH_LEVEL", "T", "a", "accessDescCount",
    "accessDescs", "accessPolicyMaxWindowSize", "accessPolicyWindow", "addressMode", "align",
    "align_val_t", "alignment", "alloc", "allocType", "always_inline", "array",
    "asyncEngineCount", "atomicCAS", "atomicCAS_block", "atomicCAS_system", "atomicExch",
    "atomicExch_block", "atomicExch_system", "attrs", "b", "base", "base_ptr", "begin",
    "binaryVersion", "blockDim", "blockIdx", "borderColor", "boundaryMode", "buf_ptr", "bytes",
    "bytesOverBudget", "bytesize", "cacheModeCA", "canMapHostMemory",
    "canUseHostPointerForRegisteredMem", "char1", "char2", "char4", "charsize", "clock",
    "clock_t", "clusterDim", "clusterDimMustBeSet", "clusterLaunch",
    "clusterSchedulingPolicyPreference", "cnt", "comp", "computePreemptionSupported",
    "concurrentKernels", "concurrentManagedAccess", "conditional", "constSizeBytes",
    "const_iterator", "const_reference", "cooperative", "cooperativeLaunch", "copyParams",
    "cudalibraryHostUniversalFunctionAndDataTable", "cudart_builtin", "dPdx", "dPdy", "dadd",
    "dataTable", "dataWindowSize", "default_", "deferredMappingCudaArraySupported", "delta",
    "depth", "desc", "devNode", "devPtr", "device", "deviceNumaConfig", "deviceNumaId",
    "devicePointer", "deviceUpdatable", "deviceUpdatableKernelNode", "device_builtin", "dim3",
    "directManagedMemAccessFromHost", "disableTrilinearOptimization", "dmul", "double2int",
    "double2ll", "double2uint", "double2ull", "dptr", "dst", "dstArray", "dstDevice",
    "dstLocHint", "dstPos", "dstPtr", "dsub", "dynamicSmemBytes", "elementSize", "end",
    "errNode_out", "errorFromNode", "errorNode", "event", "eventRecord", "eventWait", "exp2f",
    "extSemArray", "extSemSignal", "extSemWait", "extent", "extra", "f", "face", "fd", "fence",
    "field", "filterMode", "firstLayer", "firstMipmapLevel", "flags", "float1", "float2",
    "float2double", "float4", "fmaf", "fmaxf", "fn", "format", "formatDesc", "forward", "free",
    "from_port", "func", "functionTable", "functionWindowSize", "global",
    "globalL1CacheSupported", "gpuDirectRDMAFlushWritesOptions", "gpuDirectRDMASupported",
    "gpuDirectRDMAWritesOrdering", "gpuPciDeviceID", "gpuPciSubsystemID", "graph", "gridDim",
    "handle", "handleTypes", "height", "hitProp", "hitRatio", "host",
    "hostNativeAtomicSupported", "hostNumaId", "hostNumaMultinodeIpcSupported", "hostPointer",
    "hostRegisterReadOnlySupported", "hostRegisterSupported", "id", "in", "in_length", "info",
    "initializer_list", "int1", "int2", "int2double", "int4", "integrated", "ipcEventSupported",
    "isEnabled", "isMultiGpuBoard", "isResident", "is_lvalue_ref", "iterator", "kernel",
    "kernelParams", "key", "keyedMutex", "kind", "l2CacheSize", "laneMask", "lastLayer",
    "lastMipmapLevel", "launchCompletionEvent", "launch_bounds", "layer", "layerHeight",
    "layerface", "length", "level", "libraryPropertyType", "libraryPropertyType_t", "linear",
    "ll2double", "locHint", "localL1CacheSupported", "localSizeBytes", "location", "longlong1",
    "longlong2", "luid", "luidDeviceNodeMask", "major", "malloc", "managedMemory", "mask",
    "maxAnisotropy", "maxBlocksPerMultiProcessor", "maxDynamicSharedSizeBytes", "maxGridSize",
    "maxMipmapLevelClamp", "maxSize", "maxSurface1D", "maxSurface1DLayered", "maxSurface2D",
    "maxSurface2DLayered", "maxSurface3D", "maxSurfaceCubemap", "maxSurfaceCubemapLayered",
    "maxTexture1D", "maxTexture1DLayered", "maxTexture1DMipmap", "maxTexture2D",
    "maxTexture2DGather", "maxTexture2DLayered", "maxTexture2DLinear", "maxTexture2DMipmap",
    "maxTexture3D", "maxTexture3DAlt", "maxTextureCubemap", "maxTextureCubemapLayered",
    "maxThreadsDim", "maxThreadsPerBlock", "maxThreadsPerMultiProcessor", "memPitch",
    "memSyncDomain", "memSyncDomainMap", "memcpy", "memoryBusWidth",
    "memoryPoolSupportedHandleTypes", "memoryPoolsSupported", "memset", "minMipmapLevelClamp",
    "minor", "mipmap", "mipmapFilterMode", "mipmapLevelBias", "miptailFirstLevel",
    "miptailSize", "missProp", "mode", "move", "mpsEnabled", "multiGpuBoardGroupID",
    "multiProcessorCount", "name", "node", "nonPortableClusterSizeAllowed", "normalizedCoords",
    "numAttrs", "numExtSems", "numLevels", "numRegs", "num_bytes", "nvSciBufObject",
    "nvSciSync", "nvSciSyncObj", "nvlinkUtilCentricScheduling", "obj", "offset", "op",
    "overBudget", "ownership", "p", "pValue", "pad", "pageableMemoryAccess",
    "pageableMemoryAccessUsesHostPageTables", "param", "params", "paramsArray", "pciBusID",
    "pciDeviceID", "pciDomainID", "persistingL2CacheMaxSize", "phGraph_out", "pitch", "pitch2D",
    "pitchInBytes", "poolProps", "pred", "preferredClusterDim", "preferredShmemCarveout",
    "printf", "priority", "programmaticEvent", "programmaticStreamSerializationAllowed",
    "property", "ptr", "ptrdiff_t", "ptxVersion", "readMode", "reference", "regsPerBlock",
    "regsPerMultiprocessor", "remote", "remove_ref", "requiredClusterDepth",
    "requiredClusterHeight", "requiredClusterWidth", "res", "resType", "reserved", "reserved0",
    "reserved1", "reserved2", "reservedSharedMemPerBlock", "result", "result_out", "rowLength",
    "rsqrtf", "sRGB", "seamlessCubemap", "sharedMem", "sharedMemBytes", "sharedMemCarveout",
    "sharedMemPerBlock", "sharedMemPerBlockOptin", "sharedMemPerMultiprocessor",
    "sharedSizeBytes", "short1", "short2", "short4", "size", "sizeInBytes", "size_t",
    "size_type", "sparseCudaArraySupported", "src", "srcAccessOrder", "srcArray", "srcDevice",
    "srcLane", "srcLocHint", "srcPos", "srcPtr", "src_size", "std", "stream",
    "streamPrioritiesSupported", "surf1DLayeredread", "surf1DLayeredwrite", "surf1Dread",
    "surf1Dwrite", "surf2DLayeredread", "surf2DLayeredwrite", "surf2Dread", "surf2Dwrite",
    "surf3Dread", "surf3Dwrite", "surfCubemapLayeredread", "surfCubemapLayeredwrite",
    "surfCubemapread", "surfCubemapwrite", "surfObject", "surfaceAlignment", "syncPolicy", "sz",
    "tccDriver", "tex1D", "tex1DGrad", "tex1DLayered", "tex1DLayeredGrad", "tex1DLayeredLod",
    "tex1DLod", "tex1Dfetch", "tex2D", "tex2DGrad", "tex2DLayered", "tex2DLayeredGrad",
    "tex2DLayeredLod", "tex2DLod", "tex2Dgather", "tex3D", "tex3DGrad", "tex3DLod",
    "texCubemap", "texCubemapGrad", "texCubemapLayered", "texCubemapLayeredGrad",
    "texCubemapLayeredLod", "texCubemapLod", "texObject", "textureAlignment",
    "texturePitchAlignment", "threadIdx", "tileExtent", "timelineSemaphoreInteropSupported",
    "timeoutMs", "to", "to_port", "totalConstMem", "totalGlobalMem", "triggerAtBlockStart",
    "type", "uchar1", "uchar2", "uchar4", "uint1", "uint2", "uint2double", "uint3", "uint4",
    "ull2double", "ulonglong1", "ulonglong2", "unifiedAddressing", "unifiedFunctionPointers",
    "updateData", "uploadStream", "usage", "userData", "ushort1", "ushort2", "ushort4", "uuid",
    "v", "va_list", "val", "value", "value_type", "var", "vx", "vy", "vz", "w", "warpSize",
    "width", "win32", "win32SecurityAttributes", "x", "xsize", "y", "ysize", "z",
};

/* Identifiers whose definition broke a hipRTC (ROCm 5.2.3, gfx90a) compile of
 * vecadd.cu inside the HIP headers, not already in nvrtc_names: the output of
 * scripts/compiler_names.py --hiprtc libamdhip64.so.5 (2586 candidates, 258
 * break the compile, 57 left after the rules and the NVRTC table), sorted by
 * strcmp. */
static const char *const hiprtc_names[] = {
    "B", "F", "R", "U", "V", "abs", "c", "ceil", "constant", "cos", "d", "dx", "dy", "exp",
    "exp2", "floor", "fma", "half", "hi", "i", "i4", "idx", "index", "is", "j0", "j1", "jn",
    "l", "lane", "lo", "log", "log2", "max", "min", "n", "os", "pow", "r", "round", "s", "sin",
    "sqrt", "t", "tan", "u", "u4", "ui", "uint", "x0", "x1", "xs", "y0", "y1", "yn", "z0", "z1",
    "z2",
};

static const char *const c_keywords[] = {
    "_Alignas", "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary",
    "_Noreturn", "_Static_assert", "_Thread_local", "auto", "break", "case", "char", "const",
    "continue", "default", "do", "double", "else", "enum", "extern", "float", "for", "goto",
    "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
    "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", NULL};

/* C++20's keywords and alternative tokens that C does not have, and `restrict`
 * (NVRTC accepts __restrict__ only, but defining `restrict` breaks C headers). */
static const char *const cxx_keywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch",
    "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "consteval", "constexpr",
    "constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete",
    "dynamic_cast", "explicit", "export", "false", "friend", "mutable", "namespace", "new",
    "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
    "public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template",
    "this", "thread_local", "throw", "true", "try", "typeid", "typename", "using", "virtual",
    "wchar_t", "xor", "xor_eq", NULL};

static bool in_list(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

static int cmp_name(const void *key, const void *item)
{
    return strcmp((const char *)key, *(const char *const *)item);
}

static bool capital_digit_or_underscore(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *tf_define_conflict(const char *name, const char *language)
{
    bool cuda = language != NULL && strcmp(language, "cuda") == 0;
    if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z')))
        return "names that begin with two underscores, or with an underscore and a capital "
               "letter, are reserved to the compiler and its headers";
    if (strcmp(name, "defined") == 0)
        return "'defined' is an operator of the preprocessor";
    if (in_list(c_keywords, name))
        return "it is a keyword of C and C++";
    if (cuda && in_list(cxx_keywords, name))
        return "it is a C++ keyword (CUDA kernels are compiled as C++)";
    if (!cuda)
        return NULL;
    if (starts(name, "TF_") || starts(name, "tf_"))
        return "names that begin with TF_ or tf_ belong to the portability header tunefarm.h";
    if ((starts(name, "cuda") && capital_digit_or_underscore(name[4])) || starts(name, "CUDA") ||
        starts(name, "CU_") || (starts(name, "CU") && name[2] >= 'a' && name[2] <= 'z'))
        return "names that begin with cuda, CUDA, CU_ or CU and a small letter belong to the "
               "CUDA toolkit, whose headers NVRTC includes in every compile";
    if ((starts(name, "hip") && capital_digit_or_underscore(name[3])) || starts(name, "HIP"))
        return "names that begin with hip or HIP belong to the HIP toolkit, whose headers "
               "hipRTC includes in every compile";
    if (bsearch(name, nvrtc_names, sizeof nvrtc_names / sizeof nvrtc_names[0],
                sizeof nvrtc_names[0], cmp_name) != NULL)
        return "the CUDA headers NVRTC includes in every compile use it as an identifier (a "
               "template or function parameter, a member or a function), so the define "
               "rewrites their text and every variant fails to compile there";
    if (bsearch(name, hiprtc_names, sizeof hiprtc_names / sizeof hiprtc_names[0],
                sizeof hiprtc_names[0], cmp_name) != NULL)
        return "the HIP headers hipRTC includes in every compile for AMD GPUs use it as an "
               "identifier (a template or function parameter, or a function), so the define "
               "rewrites their text and every variant fails to compile there (a CUDA kernel is "
               "one source for NVIDIA and AMD)";
    return NULL;
}
