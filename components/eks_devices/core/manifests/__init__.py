"""Plan -> Kubernetes objects and launch-template settings as plain dicts, shared by the components
and `render`."""
