// Herald's one native helper: gives the C heap's free pages back to the operating system.
// src/memory-trim.ts says why and when; scripts/build.mjs compiles this file to
// dist/native/malloc-trim.node (Node-API, so one build loads on every Node version).
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

// trim(): true when glibc gave memory back, false when it had none to give; undefined where
// the C library is not glibc (there is nothing to call).
static napi_value Trim(napi_env env, napi_callback_info info) {
  napi_value result;
#if defined(__GLIBC__)
  napi_get_boolean(env, malloc_trim(0) == 1, &result);
#else
  napi_get_undefined(env, &result);
#endif
  return result;
}

NAPI_MODULE_INIT() {
  napi_value trim;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", trim) != napi_ok) return NULL;
  return exports;
}
