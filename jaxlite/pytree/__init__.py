"""The implementation of pytrees behind `jaxlite.tree_util` and `jaxlite.tree`.

`treedef` holds the registry of node types, the walkers and `PyTreeDef`; `registry` the
`register_*` functions and `Partial`; `paths` the key-path entries and `keystr`. Part of
the leaf layer: it imports nothing else of jaxlite.
"""
