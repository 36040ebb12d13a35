"""The pure core: configuration, knowledge, the Plan and its derivation, the rules and the manifests.

Nothing here imports pulumi, boto3, rich or typer (enforced by import-linter contracts).
"""
