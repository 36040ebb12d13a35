"""The multi-language component package: `eks-devices:index:Platform` for programs in any Pulumi
language (`pulumi package add <repo>/components@<version>`).

`types` holds the arguments as types Pulumi's component analyzer can read (the stack configuration
with enums, a zone count or list, free-form Helm values) and the device plan output; `component` the
hosted `Platform`; `provider` the provider that validates arguments before constructing and serves
the package over gRPC (the entry point is `components/__main__.py`).
"""
