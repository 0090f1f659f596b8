"""The transformations users call: `grad`, `vjp`, `jvp` (`autodiff`), `jit`, `vmap`,
`jacfwd` / `jacrev` / `hessian` (`jacobians`), `eval_shape` / `make_jaxpr` / `checkpoint`
(`tracing`), and the argument handling they share (`api_util`).
"""
