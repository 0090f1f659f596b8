"""XLA's typed FFI in jaxlite: the C API's structures (`c_api`), jaxlite's function table
(`api_table`), attributes (`attributes`), registered targets (`registry`) and call frames
built from Python (`frames`). `jaxlite.ffi` is the public face; `lax/ffi_call.py` holds
the primitive and the cpu backend calls handlers from generated code
(`backends/cpu/codegen/ffi_thunk.py`)."""
