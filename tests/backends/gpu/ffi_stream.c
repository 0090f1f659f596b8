/* A typed FFI handler in plain C for the gpu backend's tests (no XLA headers: it declares
 * the few C API structures it reads; their layout is XLA's ABI, xla/ffi/api/c_api.h).
 *
 * Handler `StreamTriple`: for a float32 argument x, results y = 3 x (float32, same shape)
 * and s (int64[1]) = the stream XLA_FFI_Stream_Get gave it. On a real GPU it would
 * enqueue a kernel on that stream; under the tests' numpy stand-in for CuPy its buffers
 * are host memory, so it computes on them directly.
 *
 * Build: cc -O2 -shared -fPIC ffi_stream.c -o libffi_stream.so
 */
#include <stddef.h>
#include <stdint.h>

struct Buffer {
  size_t struct_size; void* extension; int32_t dtype; void* data; int64_t rank; int64_t* dims;
};
struct List { size_t struct_size; void* extension; int64_t size; int32_t* types; void** items; };
struct ErrorArgs { size_t struct_size; void* extension; const char* message; int32_t code; };
struct StreamArgs { size_t struct_size; void* extension; void* ctx; void* stream; };
typedef void* (*Function)(void*);
struct Api {
  size_t struct_size; void* extension;
  struct { size_t struct_size; void* extension; int major, minor; } version;
  void* internal;
  Function error_create, error_get_message, error_destroy, handler_register, stream_get;
};
struct Version { size_t struct_size; void* extension; int major, minor; };
struct Metadata { size_t struct_size; struct Version api_version; uint32_t traits; int64_t state_type_id; };
struct MetadataExtension {
  struct { size_t struct_size; int32_t type; void* next; } base;
  struct Metadata* metadata;
};
struct CallFrame {
  size_t struct_size; void* extension; const struct Api* api; void* ctx; int32_t stage;
  struct List args; struct List rets;
};

enum { kF32 = 11, kS64 = 5, kExecute = 3, kInvalidArgument = 3 };

static void* fail(const struct CallFrame* frame, const char* message) {
  struct ErrorArgs args = {sizeof(struct ErrorArgs), NULL, message, kInvalidArgument};
  return frame->api->error_create(&args);
}

void* StreamTriple(struct CallFrame* frame) {
  if (frame->extension != NULL) {  /* the registration's metadata query: C API 0.1 */
    struct Metadata* metadata = ((struct MetadataExtension*)frame->extension)->metadata;
    metadata->api_version.struct_size = offsetof(struct Version, minor) + sizeof(int);
    metadata->api_version.extension = NULL;
    metadata->api_version.major = 0;
    metadata->api_version.minor = 1;
    metadata->traits = 0;
    return NULL;
  }
  if (frame->stage != kExecute) return NULL;
  if (frame->args.size != 1 || frame->rets.size != 2)
    return fail(frame, "stream_triple: one argument, two results");
  const struct Buffer* x = (const struct Buffer*)frame->args.items[0];
  struct Buffer* y = (struct Buffer*)frame->rets.items[0];
  struct Buffer* s = (struct Buffer*)frame->rets.items[1];
  if (x->dtype != kF32 || y->dtype != kF32 || s->dtype != kS64)
    return fail(frame, "stream_triple: float32 x and y, int64 s");
  struct StreamArgs stream = {sizeof(struct StreamArgs), NULL, frame->ctx, NULL};
  void* error = frame->api->stream_get(&stream);
  if (error != NULL) return error;
  int64_t n = 1;
  for (int64_t i = 0; i < x->rank; ++i) n *= x->dims[i];
  for (int64_t i = 0; i < n; ++i) ((float*)y->data)[i] = 3.0f * ((const float*)x->data)[i];
  ((int64_t*)s->data)[0] = (int64_t)(intptr_t)stream.stream;
  return NULL;
}
