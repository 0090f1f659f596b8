"""The gpu backend (issue 16), in construction; not registered as a backend yet.

- `kernel_ir`: a typed IR of one kernel (threads, blocks, shared memory, barriers, warp
  shuffles, vector accesses, atomics); `kernel_interpreter` runs it in numpy, phase by
  phase between barriers, checking races and divergence;
- `render` (+ `render_header`): CUDA C and HIP C from one source;
- `build`: the kernels of each fusion of an optimized module, by `fusion_kernels` (loop
  fusions), `transpose_kernels` (transposed reads through shared-memory tiles) and
  `reduction_kernels` (row kernels, two-stage trees), on `hlo_elemental` (fused
  instructions at an index) and `index_math`;
- `reference_run`: a fusion's kernels run by the interpreter on numpy arrays.
"""
