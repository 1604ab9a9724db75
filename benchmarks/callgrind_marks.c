/* Callgrind client requests for Python (ctypes): instructions_vs_ort counts only the run()
 * calls it brackets. Outside valgrind each request is a few no-op instructions. Without
 * valgrind's headers (the valgrind package is not a build dependency) the requests are
 * empty and onnx_light_callgrind_available() says 0, so //... builds on any machine. */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

#if defined(HAVE_CALLGRIND)
int onnx_light_callgrind_available(void) { return 1; }
int onnx_light_running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
void onnx_light_callgrind_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void onnx_light_callgrind_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void onnx_light_callgrind_zero(void) { CALLGRIND_ZERO_STATS; }
void onnx_light_callgrind_dump(const char* label) { CALLGRIND_DUMP_STATS_AT(label); }
#else
int onnx_light_callgrind_available(void) { return 0; }
int onnx_light_running_on_valgrind(void) { return 0; }
void onnx_light_callgrind_start(void) {}
void onnx_light_callgrind_stop(void) {}
void onnx_light_callgrind_zero(void) {}
void onnx_light_callgrind_dump(const char* label) { (void)label; }
#endif
