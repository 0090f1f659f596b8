"""The gpu backend (issue 16), in construction: a kernel IR (`kernel_ir`), its numpy
interpreter (`kernel_interpreter`), rendering to CUDA C and HIP C (`render`) and kernel
builders from fused HLO (`build`). Not registered as a backend yet."""
