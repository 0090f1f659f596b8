"""Code generation for the CPU backend: HLO (optimized, scheduled, buffers assigned) to LLVM
IR text. `module.emit_module` is the entry point; see each module for its part."""
