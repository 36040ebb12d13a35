"""Facts with their sources: the instance catalogue, the chart table, the upstream DeviceClasses,
the devices each DRA driver publishes, Kubernetes and Karpenter versions, CRD structural schemas."""
