"""The stack configuration: its models, their problems (every one at once), reading stack files."""
