/* A typed FFI handler written in plain C, without XLA's headers: it declares the few
 * C API structures it reads itself (their layout is XLA's ABI, see xla/ffi/api/c_api.h).
 * Handler `Scale`: y = x * factor for a float64 buffer x and a float64 attribute
 * "factor" (the only attribute). Errors go through the API table's Error_Create.
 *
 * Build: cc -O2 -shared -fPIC scale.c -o libscale.so
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct Span { const char* ptr; size_t len; };
struct Scalar { int32_t dtype; void* value; };
struct Buffer {
  size_t struct_size; void* extension; int32_t dtype; void* data; int64_t rank; int64_t* dims;
};
struct List { size_t struct_size; void* extension; int64_t size; int32_t* types; void** items; };
struct AttrList {
  size_t struct_size; void* extension; int64_t size; int32_t* types; struct Span** names;
  void** items;
};
struct ErrorArgs { size_t struct_size; void* extension; const char* message; int32_t code; };
typedef void* (*ErrorCreate)(struct ErrorArgs*);
struct Api {
  size_t struct_size; void* extension;
  struct { size_t struct_size; void* extension; int major, minor; } version;
  void* internal;
  ErrorCreate error_create;
};
/* What XLA asks a handler about itself when it is registered: the C API version it was
 * built for (XLA refuses versions it cannot call) and its traits. */
struct Version { size_t struct_size; void* extension; int major, minor; };
struct Metadata { size_t struct_size; struct Version api_version; uint32_t traits; int64_t state_type_id; };
struct MetadataExtension {
  struct { size_t struct_size; int32_t type; void* next; } base;
  struct Metadata* metadata;
};
struct CallFrame {
  size_t struct_size; void* extension; const struct Api* api; void* ctx; int32_t stage;
  struct List args; struct List rets; struct AttrList attrs; void* future;
};

enum { kF64 = 12, kExecute = 3, kScalar = 3, kInvalidArgument = 3 };

static int64_t element_count(const struct Buffer* buffer) {
  int64_t n = 1;
  for (int64_t i = 0; i < buffer->rank; ++i) n *= buffer->dims[i];
  return n;
}

static void* fail(const struct CallFrame* frame, const char* message) {
  struct ErrorArgs args = {sizeof(struct ErrorArgs), NULL, message, kInvalidArgument};
  return frame->api->error_create(&args);
}

void* Scale(struct CallFrame* frame) {
  if (frame->extension != NULL) {  /* a metadata query: C API 0.1 is all this handler needs */
    struct Metadata* metadata = ((struct MetadataExtension*)frame->extension)->metadata;
    metadata->api_version.struct_size = offsetof(struct Version, minor) + sizeof(int);
    metadata->api_version.extension = NULL;
    metadata->api_version.major = 0;
    metadata->api_version.minor = 1;
    metadata->traits = 0;
    return NULL;
  }
  if (frame->stage != kExecute) return fail(frame, "scale: execute stage only");
  if (frame->args.size != 1 || frame->rets.size != 1 || frame->attrs.size != 1)
    return fail(frame, "scale: one argument, one result and the attribute factor");
  const struct Span* name = frame->attrs.names[0];
  const struct Scalar* factor = (const struct Scalar*)frame->attrs.items[0];
  if (frame->attrs.types[0] != kScalar || name->len != 6 || memcmp(name->ptr, "factor", 6) != 0
      || factor->dtype != kF64)
    return fail(frame, "scale: attribute factor must be a float64 scalar");
  const struct Buffer* x = (const struct Buffer*)frame->args.items[0];
  struct Buffer* y = (struct Buffer*)frame->rets.items[0];
  if (x->dtype != kF64 || y->dtype != kF64) return fail(frame, "scale: x must be float64");
  const int64_t n = element_count(x);
  const double f = *(const double*)factor->value;
  for (int64_t i = 0; i < n; ++i) ((double*)y->data)[i] = ((const double*)x->data)[i] * f;
  return NULL;
}

/* Handler `Stages`, registered for all four stages: counts how often each stage ran (in
 * this process) and, when executed, writes the four counts to its int32[4] result. */
static int32_t stage_counts[4];

void* Stages(struct CallFrame* frame) {
  if (frame->extension != NULL) return Scale(frame);  /* the same metadata answer */
  if (frame->stage < 0 || frame->stage > kExecute) return fail(frame, "stages: bad stage");
  stage_counts[frame->stage] += 1;
  if (frame->stage != kExecute) return NULL;
  if (frame->rets.size != 1) return fail(frame, "stages: one int32[4] result");
  struct Buffer* out = (struct Buffer*)frame->rets.items[0];
  memcpy(out->data, stage_counts, sizeof stage_counts);
  return NULL;
}

/* Handler `AddInto`: out += x, for float64 x and an output that aliases the second
 * argument (input_output_aliases={1: 0}): it reads the output buffer before writing. */
void* AddInto(struct CallFrame* frame) {
  if (frame->extension != NULL) return Scale(frame);  /* the same metadata answer */
  if (frame->args.size != 2 || frame->rets.size != 1)
    return fail(frame, "add_into: two arguments, one result");
  const struct Buffer* x = (const struct Buffer*)frame->args.items[0];
  struct Buffer* out = (struct Buffer*)frame->rets.items[0];
  if (x->dtype != kF64 || out->dtype != kF64) return fail(frame, "add_into: float64 only");
  const int64_t n = element_count(x);
  for (int64_t i = 0; i < n; ++i) ((double*)out->data)[i] += ((const double*)x->data)[i];
  return NULL;
}
