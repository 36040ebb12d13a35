"""Test support, importable as `support`: stack builders (`support.stacks`), the mock-engine harness
(`support.engine`), the moto preflight helpers (`support.aws`) and the CLI and fresh interpreters as subprocesses
(`support.cli`)."""
