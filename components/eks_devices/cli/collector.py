"""The cyclic garbage collector while a command runs: each command is one short process that ends without
interpreter teardown, so the collector is off except where the program leaves garbage worth its price.

- `off`: through the imports, the plan and the program's body. The collector's full passes walk every
  live object, the SDK's ~270k long-lived ones included, again and again (docs/performance.md).
- `young_generation`: while the program's registrations resolve, once its body has run. The SDK leaves
  a garbage cycle of ~6 objects for each output it resolves (pulumi 3.272.0 `pulumi/runtime/rpc.py`
  `contains_unknowns` defines a closure per call: the function, its cell, its annotations), ~77k cycles
  at 1,000 pools, which only the collector frees. What the body built is frozen first, so the young
  generation holds only what the registrations make, and its survivors are never walked twice.
"""

import gc

_DEFAULT = gc.get_threshold()  # the interpreter's, put back by `off` for a process that turns it on again
_YOUNG = _DEFAULT[0]  # cheaper here than larger young generations (docs/performance.md)
_NEVER = 10**9  # older generations never collect: a count the young generation's passes never reach


def off() -> None:
    """Everything alive now frozen (never walked again), and no passes from here on."""
    gc.freeze()
    gc.disable()
    gc.set_threshold(*_DEFAULT)


def young_generation() -> None:
    """Everything alive now frozen, then passes over the young generation only."""
    gc.freeze()
    gc.set_threshold(_YOUNG, _NEVER, _NEVER)
    gc.enable()
