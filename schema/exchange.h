/* exchange.h - the vocabulary tunefarm shares with the autotuning community's
 * files: Kernel Tuner caches and T4 results (schema/export.md, schema/import.md).
 *
 * Both directions need the same small translations, kept here so that export
 * and import cannot drift apart: tunefarm statuses against Kernel Tuner's
 * failure names and T4's `invalidity` values; times in Kernel Tuner's format
 * (Python's str() of an aware datetime, "2023-12-22 09:54:05.502007+00:00")
 * and in the archive's ISO form; numbers as Python's repr() writes them, since
 * a Kernel Tuner cache key is ",".join(str(value)); parameter values typed as
 * Kernel Tuner would hold them (an enum value that reads as a number is a
 * number); time units; and a device as a JSON object. */
#ifndef TF_EXCHANGE_H
#define TF_EXCHANGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "device.h"
#include "error.h"
#include "kernel.h"

/* True if `name` is a key Kernel Tuner keeps for itself in a cache entry
 * (time, times, compile_time, verification_time, benchmark_time,
 * strategy_time, framework_time, timestamp): never a metric or a parameter
 * there, in either direction of an exchange. */
bool tf_exchange_kt_key(const char *name);
/* Kernel Tuner's failure name for tunefarm status `s` ("InvalidConfig",
 * "CompilationFailedConfig", "RuntimeFailedConfig"); NULL for ok. */
const char *tf_exchange_kt_failure(int s);
/* The tunefarm status of a Kernel Tuner failure name, or -1 if `name` is none
 * of InvalidConfig, CompilationFailedConfig, RuntimeFailedConfig, ErrorConfig. */
int tf_exchange_kt_status(const char *name);
/* T4's `invalidity` for status `s` ("correct", "constraints", "compile",
 * "runtime", "timeout", "correctness"). */
const char *tf_exchange_t4_invalidity(int s);
/* The tunefarm status of a T4 `invalidity`, or -1 if it is not one of T4's six. */
int tf_exchange_t4_status(const char *invalidity);
/* The list of T4 invalidity values, for messages. */
const char *tf_exchange_t4_names(void);

/* `unix_s` as Kernel Tuner writes timestamps: "2023-12-22 09:54:05.502007+00:00"
 * (no fraction when it is whole seconds); "" if not a positive finite time. */
void tf_exchange_python_time(double unix_s, char *out, size_t cap);
/* `unix_s` as the archive writes times: "2023-12-22T09:54:05Z"; "" if not positive. */
void tf_exchange_iso_time(double unix_s, char *out, size_t cap);
/* Parse "YYYY-MM-DD[ T]HH:MM:SS[.ffffff][Z|+HH:MM|-HH:MM]" (no zone: UTC) into
 * Unix seconds. 0, or -1 if `s` is not such a time. */
int tf_exchange_parse_time(const char *s, double *unix_s);

/* `x` as Python's repr() writes a float: the shortest text that reads back as
 * `x` ("0.1", "1.0", "1e-05", "1e+16", "inf", "nan"). */
void tf_exchange_python_float(double x, char *out, size_t cap);
/* Seconds per `unit`: "s"/"seconds", "ms"/"milliseconds" (and T4's spelling
 * "miliseconds"), "us"/"microseconds", "ns"/"nanoseconds"; 0 if unknown. */
double tf_exchange_time_unit(const char *unit);

/* Value `digit` of parameter `p` as Kernel Tuner holds it: an int parameter's
 * integer; an enum value that is a number spelled as Python spells it ("0.5",
 * "1", "1e-05": so that it comes back as the same text) as that number,
 * "True"/"False" as booleans, when every value of `p` is of that kind;
 * otherwise the string. A new reference. */
json_t *tf_exchange_param_json(const struct tf_param *p, int digit);
/* Value `digit` of `p` as it appears in a Kernel Tuner cache key: Python's
 * str() of tf_exchange_param_json's value ("16", "0.5", "True", "float4"). */
void tf_exchange_param_key(const struct tf_param *p, int digit, char *out, size_t cap);

/* `s` with every byte that is not part of valid UTF-8 replaced by '?', into
 * out[cap] (truncated at a character boundary): JSON strings must be UTF-8, and
 * an archive's messages may be cut in the middle of a character. */
void tf_exchange_utf8(const char *s, char *out, size_t cap);
/* As tf_exchange_utf8, and every control character but tab and newline (C0,
 * DEL, C1: U+0080..U+009F) a '?' too: text that a kernel's source or a file
 * chose (a compiler's message quoting an `#error`), printed to a terminal,
 * where ESC starts a command (clear the screen, retitle the window, OSC 52
 * writes the clipboard). The same rule as the HTML report's text
 * (tools/svg.c), with the exports' '?' for what cannot be shown. */
void tf_exchange_terminal(const char *s, char *out, size_t cap);
/* `text` to `out` as tf_exchange_terminal repairs it: for a command's whole
 * output (status, query, diff) built in memory, which quotes names, commands
 * and messages an archive or an imported file chose. 0, or -1 if the write
 * failed. */
int tf_exchange_terminal_write(const char *text, FILE *out);
/* json_string of tf_exchange_utf8(s): never NULL (s NULL: JSON null). */
json_t *tf_exchange_jstr(const char *s);

/* Device `d` as a JSON object: backend, vendor, name, arch, uuid, pci_bus,
 * host, memory_bytes, compute_units, driver/runtime/compiler versions and
 * `properties` (one member per device property). A new reference. */
json_t *tf_exchange_device_json(const struct tf_device *d);
/* Fill `d` from such an object: every member present replaces the field
 * (missing ones are left as they are). `where` names the object in messages
 * ("FILE: metadata.tunefarm.device"). 0, or -1 + err for a member of the wrong
 * type or too long for its field. */
int tf_exchange_device_from_json(const json_t *o, struct tf_device *d, const char *file,
                                 const char *where, struct tf_error *err);

#endif
