"""Spec -> the Plan's parts: device-manager resolution, pool plans, release values and DeviceClasses,
the overlap proof, and the claim allocator. `planner.build` runs them."""
