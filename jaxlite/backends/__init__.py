"""Backends: the runtime interface (`base`), the registry that finds and starts backends
(`registry`), and the backends themselves (`interpreter`; `cpu` and `gpu` to come).

Mirrors PJRT and JAX's `xla_bridge`. May import `xla`, `core.dtypes` and the leaf modules,
never tracers, jaxprs or lax.
"""
